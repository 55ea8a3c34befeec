// Appends to the workspace's hash-chained audit log inside the caller's
// transaction, and verifies the chain for the console.
import { Prisma } from "../db/generated/client.ts";
import { auditHash, GENESIS_HASH, verifyChain, type ChainVerdict } from "../domain/audit.ts";
import type { ServiceDeps, Tx } from "./deps.ts";

export interface Actor {
  type: "operator" | "agent" | "policy" | "system";
  id: string;
  label: string;
}

export const SYSTEM_ACTOR: Actor = { type: "system", id: "system", label: "tollgate" };

export interface AuditInput {
  actor: Actor;
  action: string;
  subjectType: string;
  subjectId: string;
  data?: unknown;
}

/** Must run inside a transaction: the advisory lock serialises appends per workspace. */
export async function appendAudit(tx: Tx, workspaceId: string, input: AuditInput, now: Date): Promise<number> {
  const [seq] = await appendAuditEntries(tx, workspaceId, [input], now);
  return seq!;
}

/** Appends several entries in order, chained to each other, in one insert. Returns their seqs. */
export async function appendAuditEntries(tx: Tx, workspaceId: string, inputs: AuditInput[], now: Date): Promise<number[]> {
  if (inputs.length === 0) return [];
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${"audit:" + workspaceId}))`;
  const last = await tx.auditEntry.findFirst({
    where: { workspaceId },
    orderBy: { seq: "desc" },
    select: { seq: true, hash: true },
  });
  let seq = last?.seq ?? 0;
  let prevHash = last?.hash ?? GENESIS_HASH;
  const rows = inputs.map((input) => {
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
    const hash = auditHash(prevHash, content);
    const row = {
      ...content,
      data: content.data === null ? Prisma.JsonNull : (content.data as Prisma.InputJsonValue),
      prevHash,
      hash,
    };
    prevHash = hash;
    return row;
  });
  await tx.auditEntry.createMany({ data: rows });
  return rows.map((row) => row.seq);
}

export async function verifyAuditChain(deps: ServiceDeps, workspaceId: string): Promise<ChainVerdict> {
  const entries = await deps.prisma.auditEntry.findMany({ where: { workspaceId }, orderBy: { seq: "asc" } });
  return verifyChain(entries.map((entry) => ({ ...entry, data: entry.data ?? null })));
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
