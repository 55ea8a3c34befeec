// Prefixed, time-ordered ids (acc_, ses_, tsk_, req_, apr_ ...): readable in messages
// and logs, sortable by creation.
import { randomBytes } from "node:crypto";

export type IdPrefix = "run" | "ws" | "acc" | "op" | "inv" | "ops" | "key" | "ses" | "tsk" | "req" | "apr" | "dlv" | "stv" | "cnv" | "pol" | "ntf" | "chn" | "msg" | "pin";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
const RANDOM_CHARACTERS = 12;

// Random bytes are drawn from the operating system a few kilobytes at a time,
// as Node does for randomUUID: drawn 12 at a time, each id cost a system call,
// and making ids took 1.8 % of the server's CPU in a run of begun and completed requests.
const POOL_BYTES = RANDOM_CHARACTERS * 256;
let pool = randomBytes(POOL_BYTES);
let used = 0;

function randomCharacters(): string {
  if (used + RANDOM_CHARACTERS > POOL_BYTES) {
    pool = randomBytes(POOL_BYTES);
    used = 0;
  }
  let out = "";
  for (let i = used; i < used + RANDOM_CHARACTERS; i++) out += ALPHABET[pool[i]! & 31];
  used += RANDOM_CHARACTERS;
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
  return `${prefix}_${time}${randomCharacters()}`;
}
