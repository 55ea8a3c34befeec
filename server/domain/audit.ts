// The audit log's hash chain: each entry's hash covers its content and the
// previous entry's hash, so editing or deleting any entry breaks every later link.
import { createHash } from "node:crypto";
import { canonicalJson } from "./json.ts";

export const GENESIS_HASH = "0".repeat(64);

export interface AuditContent {
  workspaceId: string;
  seq: number;
  actorType: string;
  actorId: string;
  actorLabel: string;
  action: string;
  subjectType: string;
  subjectId: string;
  data: unknown;
  createdAt: Date;
}

export function auditHash(prevHash: string, entry: AuditContent): string {
  // Only the content fields: a stored entry also carries prevHash and hash.
  const body = canonicalJson({
    workspaceId: entry.workspaceId,
    seq: entry.seq,
    actorType: entry.actorType,
    actorId: entry.actorId,
    actorLabel: entry.actorLabel,
    action: entry.action,
    subjectType: entry.subjectType,
    subjectId: entry.subjectId,
    data: entry.data ?? null,
    createdAt: entry.createdAt.toISOString(),
  });
  return createHash("sha256").update(prevHash).update("\n").update(body).digest("hex");
}

export type ChainVerdict = { ok: true; checked: number } | { ok: false; checked: number; brokenAtSeq: number; reason: string };

/** Checks a run of entries in seq order, starting from `prevHash`. */
export function verifyChain(
  entries: (AuditContent & { prevHash: string; hash: string })[],
  prevHash = GENESIS_HASH,
  expectedSeq = 1,
): ChainVerdict {
  let previous = prevHash;
  let seq = expectedSeq;
  for (const entry of entries) {
    if (entry.seq !== seq) return { ok: false, checked: seq - expectedSeq, brokenAtSeq: seq, reason: `entry ${seq} is missing` };
    if (entry.prevHash !== previous) {
      return { ok: false, checked: seq - expectedSeq, brokenAtSeq: seq, reason: `entry ${seq} does not link to entry ${seq - 1}` };
    }
    if (auditHash(previous, entry) !== entry.hash) {
      return { ok: false, checked: seq - expectedSeq, brokenAtSeq: seq, reason: `entry ${seq} was altered after it was written` };
    }
    previous = entry.hash;
    seq += 1;
  }
  return { ok: true, checked: entries.length };
}
