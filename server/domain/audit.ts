// The audit log's chain: each entry's MAC covers its content and the previous
// entry's MAC, so editing or deleting any entry breaks every later link, and
// without the key (derived from the server's secret, never in the database)
// nobody can recompute the chain after an edit. Entries written before keyed
// MACs (macVersion 0) keep their plain SHA-256 link and are checked as such.
import { createHash, createHmac } from "node:crypto";
import { dequal } from "dequal";
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

/** 0: SHA-256 link (before keyed MACs); 1: HMAC-SHA-256 with the server's audit key. */
export const CURRENT_MAC_VERSION = 1;

export function auditHash(prevHash: string, entry: AuditContent): string {
  return createHash("sha256").update(prevHash).update("\n").update(auditBody(entry)).digest("hex");
}

/** The keyed link of an entry: HMAC-SHA-256 of the previous link and the entry's content. */
export function auditMac(key: Buffer, prevHash: string, entry: AuditContent): string {
  return createHmac("sha256", key).update(prevHash).update("\n").update(auditBody(entry)).digest("hex");
}

function auditBody(entry: AuditContent): string {
  // Only the content fields: a stored entry also carries prevHash and hash.
  return canonicalJson({
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
}

export type ChainVerdict = { ok: true; checked: number } | { ok: false; checked: number; brokenAtSeq: number; reason: string };

type StoredEntry = AuditContent & { prevHash: string; hash: string; macVersion?: number };

/**
 * Checks a run of entries in seq order, starting from `prevHash`: each links to
 * the one before and its MAC (or, for macVersion 0, its hash) matches its content.
 * Once one entry is keyed, a later unkeyed one is a downgrade and is refused.
 */
export function verifyChain(entries: StoredEntry[], options: { key: Buffer; prevHash?: string; expectedSeq?: number }): ChainVerdict {
  const expectedSeq = options.expectedSeq ?? 1;
  let previous = options.prevHash ?? GENESIS_HASH;
  let seq = expectedSeq;
  let keyed = false;
  for (const entry of entries) {
    const broken = (reason: string): ChainVerdict => ({ ok: false, checked: seq - expectedSeq, brokenAtSeq: seq, reason });
    if (entry.seq !== seq) return broken(`entry ${seq} is missing`);
    if (entry.prevHash !== previous) return broken(`entry ${seq} does not link to entry ${seq - 1}`);
    const version = entry.macVersion ?? 0;
    if (version === 0 && keyed) return broken(`entry ${seq} has an unkeyed hash after keyed entries: it was rewritten`);
    keyed ||= version === CURRENT_MAC_VERSION;
    const expected = version === CURRENT_MAC_VERSION ? auditMac(options.key, previous, entry) : auditHash(previous, entry);
    if (expected !== entry.hash) return broken(`entry ${seq} was altered after it was written`);
    previous = entry.hash;
    seq += 1;
  }
  return { ok: true, checked: entries.length };
}

/** A sealed chain head: what the log held when it was sealed, kept outside the database. */
export interface AuditDigest {
  workspaceId: string;
  seq: number;
  hash: string;
  sealedAt: string;
}

/**
 * Checks the live chain against the last digest sealed outside the database:
 * the entry at the digest's seq must still exist with the same link, so deleting
 * the newest entries, the whole log, or rewriting it all is detected.
 */
export function checkAgainstDigest(entries: { seq: number; hash: string }[], digest: AuditDigest): ChainVerdict | null {
  const sealed = entries.find((entry) => entry.seq === digest.seq);
  const newest = entries.at(-1)?.seq ?? 0;
  if (!sealed) {
    return {
      ok: false,
      checked: entries.length,
      brokenAtSeq: newest + 1,
      reason: `the log ends at entry ${newest}, but entry ${digest.seq} was sealed at ${digest.sealedAt}: entries ${newest + 1}–${digest.seq} were deleted`,
    };
  }
  if (sealed.hash !== digest.hash) {
    return { ok: false, checked: entries.length, brokenAtSeq: digest.seq, reason: `entry ${digest.seq} differs from the one sealed at ${digest.sealedAt}: the log was rewritten` };
  }
  return null;
}

const DECISION_ACTIONS = new Set(["approval.decided", "approval.expired", "approval.canceled"]);

export interface DecidedApproval {
  id: string;
  status: string;
  decisionAction: string | null;
  approvedArgs: unknown;
}

/**
 * Every ended approval must agree with the audit entry that recorded its end
 * (status, action, and the arguments of an edit): an approval row edited in
 * the database (a rejection turned into an approval) is caught here, naming it.
 */
export function crossCheckApprovals(
  approvals: DecidedApproval[],
  entries: { seq: number; action: string; subjectId: string; data: unknown }[],
): { approvalId: string; reason: string } | null {
  const ending = new Map<string, { seq: number; data: Record<string, unknown> }>();
  for (const entry of entries) {
    if (DECISION_ACTIONS.has(entry.action)) ending.set(entry.subjectId, { seq: entry.seq, data: (entry.data ?? {}) as Record<string, unknown> });
  }
  for (const approval of approvals) {
    const recorded = ending.get(approval.id);
    if (!recorded) return { approvalId: approval.id, reason: `approval ${approval.id} is ${approval.status} but no audit entry records how it ended` };
    const { status, action } = recorded.data;
    if (status !== approval.status || (action ?? null) !== approval.decisionAction) {
      return {
        approvalId: approval.id,
        reason: `approval ${approval.id} is ${approval.status}${approval.decisionAction ? ` (${approval.decisionAction})` : ""} in its row, but audit entry ${recorded.seq} recorded ${String(status)}${action ? ` (${String(action)})` : ""}`,
      };
    }
    if (approval.decisionAction === "edit" && !dequal(recorded.data.args ?? null, approval.approvedArgs ?? null)) {
      return { approvalId: approval.id, reason: `approval ${approval.id}'s approved arguments differ from those audit entry ${recorded.seq} recorded` };
    }
  }
  return null;
}
