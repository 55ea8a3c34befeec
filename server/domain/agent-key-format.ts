// Agent keys secret scanners can spot, in the style of GitHub's tokens: a
// recognisable prefix, 30 random base62 characters, and a 6-character base62
// CRC32 of them. A scanner (or Tollgate, before any database lookup) tells a
// real key from a mistyped or made-up one without asking anyone.
//   tgk_<30 random>_<6 checksum>   e.g. tgk_4f9Qm2...Zx_0a1B2c
import { randomInt } from "node:crypto";
import { crc32 } from "node:zlib";

export const AGENT_KEY_PREFIX = "tgk_";
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BODY_CHARS = 30;
const CHECKSUM_CHARS = 6;
const SHAPE = new RegExp(`^${AGENT_KEY_PREFIX}([0-9A-Za-z]{${BODY_CHARS}})_([0-9A-Za-z]{${CHECKSUM_CHARS}})$`);

function base62(value: number, width: number): string {
  let text = "";
  for (let rest = value; rest > 0; rest = Math.floor(rest / 62)) text = ALPHABET[rest % 62] + text;
  return text.padStart(width, "0");
}

const checksumOf = (body: string) => base62(crc32(body), CHECKSUM_CHARS);

export function newAgentKey(): string {
  let body = "";
  for (let i = 0; i < BODY_CHARS; i++) body += ALPHABET[randomInt(62)];
  return `${AGENT_KEY_PREFIX}${body}_${checksumOf(body)}`;
}

/**
 * "valid": this format with a matching checksum. "corrupt": this format with
 * a checksum that does not match (a typo or a made-up key: refused without a
 * lookup). "other": any other string, such as a key issued before this format
 * or set with TOLLGATE_AGENT_KEY, which is looked up as before.
 */
export function agentKeyShape(key: string): "valid" | "corrupt" | "other" {
  const match = SHAPE.exec(key);
  if (!match) return "other";
  return checksumOf(match[1]!) === match[2] ? "valid" : "corrupt";
}

/** What lists show of a key: enough to recognise it, never enough to use it. */
export const agentKeyPrefixOf = (key: string) => key.slice(0, AGENT_KEY_PREFIX.length + 6);
