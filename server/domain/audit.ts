// The audit log's chain: each entry's MAC covers its content and the previous
// entry's MAC, so editing or deleting any entry breaks every later link, and
// without the key (derived from the server's secret, never in the database)
// nobody can recompute the chain after an edit. Entries written before keyed
// MACs (macVersion 0) keep their plain SHA-256 link, and count only where a
// keyed anchor entry vouches for them (see verifyChain).
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

/**
 * The keyed entry the one-time upgrade appended to every chain that held
 * unkeyed entries: its data names the last of them (`throughSeq`), and its
 * MAC covers the link to it, so it vouches for all of them.
 */
export const UNKEYED_ANCHOR_ACTION = "audit.unkeyed_anchored";

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

/** What walking a chain found: its verdict on links and MACs, and the unkeyed entries at its start. */
export interface ChainWalk {
  verdict: ChainVerdict;
  /** The seq of the last unkeyed entry (0: none). */
  lastUnkeyed: number;
  /** Whether a keyed anchor entry names that last unkeyed entry. */
  anchored: boolean;
}

/**
 * Checks a run of entries in seq order, starting from `prevHash`: each links to
 * the one before and its MAC (or, for an unkeyed entry, its hash) matches its
 * content; unkeyed entries only before keyed ones. Says which unkeyed entries
 * there are and whether an anchor vouches for them; verifyChain decides.
 */
export function walkChain(entries: StoredEntry[], options: { key: Buffer; prevHash?: string; expectedSeq?: number }): ChainWalk {
  const expectedSeq = options.expectedSeq ?? 1;
  let previous = options.prevHash ?? GENESIS_HASH;
  let seq = expectedSeq;
  let keyed = false;
  let lastUnkeyed = 0;
  let anchored = false;
  for (const entry of entries) {
    const broken = (reason: string): ChainWalk => ({ verdict: { ok: false, checked: seq - expectedSeq, brokenAtSeq: seq, reason }, lastUnkeyed, anchored });
    if (entry.seq !== seq) return broken(`entry ${seq} is missing`);
    if (entry.prevHash !== previous) return broken(`entry ${seq} does not link to entry ${seq - 1}`);
    const version = entry.macVersion ?? 0;
    if (version !== 0 && version !== CURRENT_MAC_VERSION) return broken(`entry ${seq} has an unknown MAC version ${version}`);
    if (version === 0 && keyed) return broken(`entry ${seq} has an unkeyed hash after keyed entries: it was rewritten`);
    const expected = version === CURRENT_MAC_VERSION ? auditMac(options.key, previous, entry) : auditHash(previous, entry);
    if (expected !== entry.hash) return broken(`entry ${seq} was altered after it was written`);
    if (version === 0) lastUnkeyed = seq;
    else {
      keyed = true;
      if (entry.action === UNKEYED_ANCHOR_ACTION && (entry.data as { throughSeq?: unknown } | null)?.throughSeq === lastUnkeyed) anchored = true;
    }
    previous = entry.hash;
    seq += 1;
  }
  return { verdict: { ok: true, checked: entries.length }, lastUnkeyed, anchored };
}

/**
 * The chain's verdict. Unkeyed entries (anyone can compute their hash) count
 * only as the chain's first entries, and only when a keyed anchor entry
 * (UNKEYED_ANCHOR_ACTION) names the last of them: a chain rewritten from its
 * start without the key, or unkeyed entries anywhere else, are refused.
 * Nothing else (no date, no workspace setting) lets them pass.
 */
export function verifyChain(entries: StoredEntry[], options: { key: Buffer; prevHash?: string; expectedSeq?: number }): ChainVerdict {
  const { verdict, lastUnkeyed, anchored } = walkChain(entries, options);
  if (!verdict.ok || lastUnkeyed === 0 || anchored) return verdict;
  const first = options.expectedSeq ?? 1;
  return {
    ok: false,
    checked: 0,
    brokenAtSeq: first,
    reason: `entries ${first}–${lastUnkeyed} are in the unkeyed format of before and no keyed anchor entry vouches for them: they were written or rewritten without the audit key`,
  };
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
