// Appends to the workspace's MAC-chained audit log inside the caller's
// transaction, and verifies the chain for the console.
import { Prisma } from "../db/generated/client.ts";
import { auditMac, checkAgainstDigest, type AuditContent, crossCheckApprovals, CURRENT_MAC_VERSION, GENESIS_HASH, verifyChain, walkChain, type AuditDigest, type ChainVerdict, type ChainWalk } from "../domain/audit.ts";
import { deriveKey } from "../secret.ts";
import { digestCheck } from "./audit-seal.ts";
import type { ServiceDeps, Tx } from "./deps.ts";

type Db = Pick<ServiceDeps["prisma"], "auditEntry">;

export interface Actor {
  type: "operator" | "agent" | "policy" | "system";
  id: string;
  label: string;
}

/** The newest entry of a workspace's chain, read behind its audit lock. */
export interface AuditHead {
  seq: number;
  hash: string;
}

/** An entry as written: its content, its link to the one before, and its MAC. */
export type AuditRow = AuditContent & { prevHash: string; hash: string; macVersion: number };

/**
 * Takes the workspace's audit lock (lock order step 4), then reads the chain's
 * head, in one statement (migration 20261124100000_engine_functions). The lock
 * is held until the transaction ends.
 */
export async function lockAuditHead(tx: Tx, workspaceId: string): Promise<AuditHead | null> {
  const [head] = await tx.$queryRaw<AuditHead[]>`SELECT * FROM tollgate_lock_audit_head(${workspaceId})`;
  return head ?? null;
}

/** The workspace's audit head as it is now, unlocked: a write chained to it checks behind the audit lock that it still is. */
export async function readAuditHead(deps: ServiceDeps, workspaceId: string): Promise<AuditHead | null> {
  const [head] = await deps.sql.query<AuditHead>(Prisma.sql`
    SELECT seq, hash FROM "AuditEntry" WHERE "workspaceId" = ${workspaceId} ORDER BY seq DESC LIMIT 1`);
  return head ?? null;
}

export const SYSTEM_ACTOR: Actor = { type: "system", id: "system", label: "tollgate" };

export interface AuditInput {
  actor: Actor;
  action: string;
  subjectType: string;
  subjectId: string;
  data?: unknown;
}

/**
 * The workspace audit logs: appends keyed-MAC-chained entries inside the
 * caller's transaction and verifies the chain. The MAC key comes from the
 * server's secret, so it never reaches the database.
 */
export class AuditLog {
  readonly #key: Buffer;

  constructor(secret: string) {
    this.#key = deriveKey(secret, "tollgate audit chain v1");
  }

  /** Must run inside a transaction: the advisory lock serialises appends per workspace. */
  async append(tx: Tx, workspaceId: string, input: AuditInput, now: Date): Promise<number> {
    const [seq] = await this.appendMany(tx, workspaceId, [input], now);
    return seq!;
  }

  /** Appends several entries in order, chained to each other, in one insert. Returns their seqs. */
  async appendMany(tx: Tx, workspaceId: string, inputs: AuditInput[], now: Date): Promise<number[]> {
    if (inputs.length === 0) return [];
    const rows = this.chainAfter(await lockAuditHead(tx, workspaceId), workspaceId, inputs, now);
    await tx.auditEntry.createMany({
      data: rows.map((row) => ({ ...row, data: row.data === null ? Prisma.JsonNull : (row.data as Prisma.InputJsonValue) })),
    });
    return rows.map((row) => row.seq);
  }

  /**
   * The entries that follow `head` (null: the chain is empty), each MACed and
   * linked to the one before. The caller either holds the workspace's audit
   * lock (lockAuditHead) until it has written them, or writes them with a
   * statement that takes the lock and finds `head` still the head.
   */
  chainAfter(head: AuditHead | null, workspaceId: string, inputs: AuditInput[], now: Date): AuditRow[] {
    let seq = head?.seq ?? 0;
    let prevHash = head?.hash ?? GENESIS_HASH;
    return inputs.map((input) => {
      seq += 1;
      const content = {
        workspaceId,
        seq,
        actorType: input.actor.type,
        actorId: input.actor.id,
        actorLabel: input.actor.label,
        action: input.action,
        subjectType: input.subjectType,
        subjectId: input.subjectId,
        data: input.data ?? null,
        createdAt: now,
      };
      const hash = auditMac(this.#key, prevHash, content);
      const row = { ...content, prevHash, hash, macVersion: CURRENT_MAC_VERSION };
      prevHash = hash;
      return row;
    });
  }

  /** Walks entries with this server's key (audit-unkeyed-anchor.ts). */
  walk(entries: Parameters<typeof walkChain>[0]): ChainWalk {
    return walkChain(entries, { key: this.#key });
  }

  /**
   * Checks the chain's links and MACs, then the chain against what `digests`
   * finds sealed outside the database: the last digest, or why none can be
   * trusted (a missing or shortened digest file).
   */
  async verify(db: Db, workspaceId: string, digests?: (entries: { seq: number; createdAt: Date }[]) => Promise<{ digest: AuditDigest | null } | { seq: number; reason: string }>): Promise<ChainVerdict> {
    const entries = await db.auditEntry.findMany({ where: { workspaceId }, orderBy: { seq: "asc" } });
    const verdict = verifyChain(
      entries.map((entry) => ({ ...entry, data: entry.data ?? null })),
      { key: this.#key },
    );
    if (!verdict.ok || !digests) return verdict;
    const found = await digests(entries);
    if ("reason" in found) return { ok: false, checked: entries.length, brokenAtSeq: found.seq, reason: found.reason };
    return (found.digest && checkAgainstDigest(entries, found.digest)) || verdict;
  }
}

/**
 * The whole check behind audit.verify and `npm run audit:verify`: the chain's
 * links and MACs, the chain against the last digest sealed outside the
 * database, and every ended approval against the audit entry of its ending.
 */
export async function verifyAudit(deps: ServiceDeps, workspaceId: string): Promise<ChainVerdict> {
  const verdict = await deps.audit.verify(deps.prisma, workspaceId, (entries) => digestCheck(deps.auditDigests, workspaceId, entries, deps.now()));
  if (!verdict.ok) return verdict;
  const [approvals, endings] = await Promise.all([
    deps.prisma.approval.findMany({
      where: { workspaceId, status: { not: "PENDING" } },
      select: { id: true, status: true, decisionAction: true, approvedArgs: true },
    }),
    deps.prisma.auditEntry.findMany({
      where: { workspaceId, subjectType: "approval", action: { in: ["approval.decided", "approval.expired", "approval.canceled"] } },
      select: { seq: true, action: true, subjectId: true, data: true },
    }),
  ]);
  const mismatch = crossCheckApprovals(approvals, endings);
  if (!mismatch) return verdict;
  const entry = endings.find((candidate) => candidate.subjectId === mismatch.approvalId);
  return { ok: false, checked: verdict.checked, brokenAtSeq: entry?.seq ?? 0, reason: mismatch.reason };
}

export interface AuditFilter {
  action?: string;
  actor?: string;
  subjectId?: string;
  limit: number;
  /** seq of the last entry of the previous page (entries come newest first). */
  beforeSeq?: number;
}

export async function listAudit(deps: ServiceDeps, workspaceId: string, filter: AuditFilter) {
  const entries = await deps.prisma.auditEntry.findMany({
    where: {
      workspaceId,
      ...(filter.action ? { action: { startsWith: filter.action } } : {}),
      ...(filter.actor ? { actorLabel: { contains: filter.actor, mode: "insensitive" as const } } : {}),
      ...(filter.subjectId ? { subjectId: filter.subjectId } : {}),
      ...(filter.beforeSeq ? { seq: { lt: filter.beforeSeq } } : {}),
    },
    orderBy: { seq: "desc" },
    take: filter.limit,
  });
  return {
    items: entries.map((entry) => ({
      seq: entry.seq,
      at: entry.createdAt.toISOString(),
      actorType: entry.actorType,
      actor: entry.actorLabel,
      action: entry.action,
      subjectType: entry.subjectType,
      subjectId: entry.subjectId,
      data: entry.data ?? null,
      hash: entry.hash,
    })),
    nextBeforeSeq: entries.length === filter.limit ? (entries.at(-1)?.seq ?? null) : null,
  };
}
