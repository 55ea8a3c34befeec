// Prefixed, time-ordered ids (acc_, ses_, tsk_, req_, apr_ ...): readable in messages
// and logs, sortable by creation.
import { randomBytes } from "node:crypto";

export type IdPrefix = "ws" | "acc" | "op" | "ops" | "key" | "ses" | "tsk" | "req" | "apr" | "dlv" | "stv" | "cnv" | "pol" | "ntf" | "chn" | "msg";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

function encode(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) out += ALPHABET[byte & 31];
  return out;
}

/** A 10-character time part (ms since epoch) followed by 12 random characters. */
export function newId(prefix: IdPrefix, now = Date.now()): string {
  let time = "";
  let value = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[value % 32] + time;
    value = Math.floor(value / 32);
  }
  return `${prefix}_${time}${encode(randomBytes(12))}`;
}
