// Every ending of a pending approval (a decision, a quorum, a timeout) goes through one
// conditional write, so exactly one ending wins and un-pauses the call chain in its transaction.
import { Prisma, type Approval } from "../../db/generated/client.ts";
import { newId } from "../../domain/ids.ts";
import type { DecisionAction } from "../../domain/lifecycle.ts";
import { readAuditHead, type Actor, type AuditHead, type AuditRow } from "../audit.ts";
import { changesOf, type ChangeRow, type Changes } from "../cascade.ts";
import type { ServiceDeps, Tx } from "../deps.ts";
import { FUNCTION_APPROVAL_COLUMNS, splitApprovalRow, type ApprovalRow } from "./approval-row.ts";
import type { ReceiptSubject } from "../receipts.ts";
import type { OpenedApproval } from "./opened-approvals.ts";
import { withRetries } from "../transaction.ts";

/** What a receipt states, with the approval named by its row's own id. */
type DecisionToSign = Omit<ReceiptSubject, "approvalId"> & { id: string };

/** The signed receipt a tool server verifies before it runs the approved call. */
export function signReceipt(deps: ServiceDeps, decision: DecisionToSign): Promise<string> {
  const { id, ...subject } = decision;
  return deps.receipts.sign({ approvalId: id, ...subject });
}

export interface Ending {
  status: "APPROVED" | "REJECTED" | "EXPIRED" | "CANCELED";
  action: DecisionAction | null;
  args?: unknown;
  message?: string;
  decidedBy: string;
  decidedById: string | null;
  deciderKind: "operator" | "timeout";
}

export type ApprovalWithAgent = Approval & { task: { agent: string } };

/** An approval an ending wrote, as it is now, with what changed with it. */
export type EndedApproval = { approval: Approval; changes: Changes };

/** An approval behind the locks its ending needs (lockApprovalEnding). */
export interface LockedApproval {
  approval: ApprovalWithAgent;
  /** The request's webhook address, if it has one. */
  resumeUrl: string | null;
  /** The workspace's audit chain head, read behind the audit lock; absent when the approval had already ended. */
  auditHead?: AuditHead | null;
}

/**
 * One statement that takes every lock an ending needs, in the lock order
 * (locks.ts): the request's call chain, the approval, the chain's tasks, then,
 * while the approval is pending, the workspace's audit lock with the chain's
 * head (tollgate_lock_approval_ending_with_head). Returns the approval as it
 * is behind its lock; null when the workspace has no such approval.
 */
export async function lockApprovalEnding(tx: Tx, workspaceId: string, approvalId: string): Promise<LockedApproval | null> {
  const [row] = await tx.$queryRaw<(ApprovalRow & EndingRowExtra & { headLocked: boolean })[]>`
    SELECT ${ENDING_ROW_COLUMNS}, f.head_locked AS "headLocked" FROM tollgate_lock_approval_ending_with_head(${workspaceId}, ${approvalId}) f`;
  if (!row) return null;
  const { headLocked, ...rest } = row;
  const { approval, resumeUrl, auditHead } = endingRow(rest);
  return { approval, resumeUrl, ...(headLocked ? { auditHead } : {}) };
}

/**
 * The columns both first statements of an ending answer with, from a function
 * row named f: the approval, its task's agent, its request's webhook address
 * and the workspace's audit head (seq and hash null when the chain is empty).
 */
const ENDING_ROW_COLUMNS = Prisma.sql`${FUNCTION_APPROVAL_COLUMNS},
  f.task_agent AS "taskAgent", f.resume_url AS "requestResumeUrl", f.head_seq AS "headSeq", f.head_hash AS "headHash"`;

interface EndingRowExtra {
  taskAgent: string;
  requestResumeUrl: string | null;
  headSeq: number | null;
  headHash: string | null;
}

function endingRow(row: ApprovalRow & EndingRowExtra): { approval: ApprovalWithAgent; resumeUrl: string | null; auditHead: AuditHead | null } {
  const { approval, extra } = splitApprovalRow(row, ["taskAgent", "requestResumeUrl", "headSeq", "headHash"] as const);
  return {
    approval: { ...approval, task: { agent: extra.taskAgent } },
    resumeUrl: extra.requestResumeUrl,
    auditHead: extra.headSeq === null ? null : { seq: extra.headSeq, hash: extra.headHash! },
  };
}

/**
 * The conditional write that ends a pending approval by decision or timeout,
 * with everything that must change with it: the receipt, the chain's counts,
 * task statuses, the webhook delivery, the trace and the audit entry. Returns
 * null when the approval was no longer pending (another decision won).
 */
export async function finishApproval(
  deps: ServiceDeps,
  tx: Tx,
  approval: Pick<Approval, "id" | "workspaceId">,
  ending: Ending,
  actor: Actor,
  now: Date,
): Promise<EndedApproval | null> {
  const locked = await lockApprovalEnding(tx, approval.workspaceId, approval.id);
  return locked && finishLockedApproval(deps, tx, locked, ending, actor, now);
}

/** What an ending writes, as the server builds it between its two statements. */
interface EndingWrite {
  /** The decision's columns, with the signed receipt. */
  written: Pick<Approval, "status" | "decisionAction" | "decisionMessage" | "approvedArgs" | "decidedBy" | "decidedById" | "deciderKind" | "decidedAt" | "receipt">;
  /** The audit entry, chained and MACed on the head the approval was read with. */
  audit: AuditRow;
  delivery: { id: string; url: string } | null;
  trace: { approvalId: string; status: Ending["status"]; action: DecisionAction | null; decidedBy: string };
}

/** Signs the receipt and chains the audit entry: the work the database must not do (neither key may reach it). */
async function endingWrite(
  deps: ServiceDeps,
  { approval, resumeUrl }: { approval: ApprovalWithAgent; resumeUrl: string | null },
  head: AuditHead | null,
  ending: Ending,
  actor: Actor,
  now: Date,
): Promise<EndingWrite> {
  const { task, ...row } = approval;
  const approvedArgs = (ending.action === "edit" ? ending.args : ending.action === "approve" ? row.proposedArgs : null) as Approval["approvedArgs"];
  const written = {
    status: ending.status,
    decisionAction: ending.action,
    decisionMessage: ending.message ?? null,
    approvedArgs: approvedArgs ?? null,
    decidedBy: ending.decidedBy,
    decidedById: ending.decidedById,
    deciderKind: ending.deciderKind,
    decidedAt: now,
    // An answer to a question or a form lets nothing run: only a tool call gets a receipt.
    receipt:
      approvedArgs === null || approvedArgs === undefined || row.kind !== "tool"
        ? null
        : await signReceipt(deps, { ...row, agent: task.agent, approvedArgs, decidedBy: ending.decidedBy, decidedAt: now }),
  };
  const [audit] = deps.audit.chainAfter(
    head,
    row.workspaceId,
    [
      {
        actor,
        action: ending.deciderKind === "timeout" ? "approval.expired" : "approval.decided",
        subjectType: "approval",
        subjectId: row.id,
        data: {
          status: ending.status,
          action: ending.action,
          args: ending.action === "edit" ? ending.args : undefined,
          message: ending.message ?? null,
          tool: row.tool,
          ...(row.policyId ? { policy: { id: row.policyId, name: row.policyName, version: row.policyVersion } } : {}),
        },
      },
    ],
    now,
  );
  return {
    written,
    audit: audit!,
    delivery: resumeUrl ? { id: newId("dlv"), url: resumeUrl } : null,
    trace: { approvalId: row.id, status: ending.status, action: ending.action, decidedBy: ending.decidedBy },
  };
}

/** The ended approval and what changed with it, from the rows the ending's write returned. */
function endedWith({ task: _task, ...row }: ApprovalWithAgent, write: EndingWrite, rows: ChangeRow[]): EndedApproval {
  const changes = changesOf(rows);
  // The row as opened or read, with the columns the conditional update wrote (it wrote no other).
  const updated: Approval = { ...row, ...write.written };
  changes.approvals.push(updated);
  if (write.delivery) changes.deliveriesQueued += 1;
  return { approval: updated, changes };
}

/**
 * finishApproval for an approval already behind its locks: one statement
 * (tollgate_finish_approval) writes the ending, the counts along the chain,
 * the task statuses, the delivery, the trace and the audit entry.
 */
export async function finishLockedApproval(
  deps: ServiceDeps,
  tx: Tx,
  locked: LockedApproval,
  ending: Ending,
  actor: Actor,
  now: Date,
): Promise<EndedApproval | null> {
  if (locked.approval.status !== "PENDING" || locked.auditHead === undefined) return null;
  const write = await endingWrite(deps, locked, locked.auditHead, ending, actor, now);
  const rows = await tx.$queryRaw<ChangeRow[]>`
    SELECT * FROM tollgate_finish_approval(${locked.approval.id}, ${JSON.stringify(write.written)}::json, ${write.delivery && JSON.stringify(write.delivery)}::json,
      ${JSON.stringify(write.trace)}::json, ${JSON.stringify(write.audit)}::json, ${now}::timestamp(3))`;
  // No 'approval' row: it was no longer pending, and nothing was written.
  if (rows[0]?.kind !== "approval") return null;
  return endedWith(locked.approval, write, rows);
}

/** An approval as it is now, read without a lock, with what its ending needs. */
export interface ApprovalBeforeEnding {
  approval: ApprovalWithAgent;
  resumeUrl: string | null;
  /** The workspace's audit head as it is now: the decision's entry is chained to it. */
  auditHead: AuditHead | null;
}

/**
 * The first statement of an ending without a transaction
 * (tollgate_read_approval_before_ending): the approval, its task's agent, its
 * request's webhook address and the workspace's audit head, unlocked. Null
 * when the workspace has no such approval.
 */
export async function readApprovalBeforeEnding(deps: ServiceDeps, workspaceId: string, approvalId: string): Promise<ApprovalBeforeEnding | null> {
  const [row] = await deps.sql.query<ApprovalRow & EndingRowExtra>(Prisma.sql`
    SELECT ${ENDING_ROW_COLUMNS} FROM tollgate_read_approval_before_ending(${workspaceId}, ${approvalId}) f`);
  return row ? endingRow(row) : null;
}

/**
 * The second statement, a transaction of its own
 * (tollgate_finish_approval_if_unchanged): behind the ending's locks and the
 * audit lock, the approval still pending and the audit head still the one
 * read, it writes what finishLockedApproval writes. Otherwise it writes
 * nothing and answers "stale" (the approval ended meanwhile) or "contended"
 * (another entry took the audit head).
 */
export async function finishApprovalIfUnchanged(
  deps: ServiceDeps,
  read: ApprovalBeforeEnding,
  ending: Ending,
  actor: Actor,
  now: Date,
): Promise<EndedApproval | "stale" | "contended"> {
  const { approval } = read;
  const write = await endingWrite(deps, read, read.auditHead, ending, actor, now);
  const rows = await deps.sql.query<ChangeRow>(Prisma.sql`
    SELECT * FROM tollgate_finish_approval_if_unchanged(${approval.workspaceId}, ${approval.id}, ${read.auditHead?.seq ?? null}::int,
      ${JSON.stringify(write.written)}::json, ${write.delivery && JSON.stringify(write.delivery)}::json,
      ${JSON.stringify(write.trace)}::json, ${JSON.stringify(write.audit)}::json, ${now}::timestamp(3))`);
  const kind = rows[0]?.kind;
  if (kind === "stale" || kind === "contended") return kind;
  // No row at all: the conditional write found the approval ended (it was checked pending behind the lock, so this is the SQL's own guard).
  if (kind !== "approval") return "stale";
  // The statement was its own transaction: the audit entry is committed.
  deps.writtenAuditHeads.written(approval.workspaceId, write.audit);
  return endedWith(approval, write, rows);
}

/** A decision on an approval this node opened, queued to be written with the others in its workspace (DecisionBatches). */
export interface QueuedEnding {
  opened: OpenedApproval;
  ending: Ending;
  actor: Actor;
  now: Date;
}

/**
 * Decisions queued in the workspace's turn, chained to the entry this node
 * last wrote (WrittenAuditHeads), or to the head read now in the turn while
 * this node's guesses are not trusted, and written behind the locks when
 * every approval is still pending and that entry still the head. Reading the
 * head here keeps a burst's decisions in batches after a guess missed: read
 * one by one, each in a turn of its own, they fell behind the turns' wait and
 * then behind the locks, where each moved the head under the next batch.
 * "read it" when the workspace has no head or the write found either changed
 * (nothing was written; each decision then reads its approval and the head).
 */
export async function finishQueuedApprovals(deps: ServiceDeps, workspaceId: string, queued: QueuedEnding[]): Promise<EndedApproval[] | "read it"> {
  const head = deps.writtenAuditHeads.get(workspaceId, deps.now()) ?? (await readAuditHead(deps, workspaceId));
  if (!head) return "read it";
  // One alone is written by the one-decision function, whose statement is the lighter of the two.
  const finished = queued.length === 1 ? await finishAlone(deps, head, queued[0]!) : await finishApprovalsTogether(deps, workspaceId, head, queued);
  if (finished === "contended") deps.writtenAuditHeads.missed(workspaceId, deps.now());
  return typeof finished === "string" ? "read it" : finished;
}

async function finishAlone(deps: ServiceDeps, head: AuditHead, { opened, ending, actor, now }: QueuedEnding): Promise<EndedApproval[] | "stale" | "contended"> {
  const finished = await withRetries(() => finishApprovalIfUnchanged(deps, { ...opened, auditHead: head }, ending, actor, now));
  return typeof finished === "string" ? finished : [finished];
}

/**
 * Several queued decisions in one statement (tollgate_finish_approvals_if_unchanged),
 * their audit entries chained one after another to `head`; "stale" or
 * "contended" as for one (finishApprovalIfUnchanged), and nothing written.
 */
async function finishApprovalsTogether(deps: ServiceDeps, workspaceId: string, head: AuditHead, queued: QueuedEnding[]): Promise<EndedApproval[] | "stale" | "contended"> {
  const writes: EndingWrite[] = [];
  let chainedTo: AuditHead = head;
  for (const each of queued) {
    const write = await endingWrite(deps, each.opened, chainedTo, each.ending, each.actor, each.now);
    writes.push(write);
    chainedTo = write.audit;
  }
  const endings = JSON.stringify(
    queued.map((each, index) => {
      const { written, delivery, trace, audit } = writes[index]!;
      return { approvalId: each.opened.approval.id, ending: written, delivery, trace, audit, now: each.now };
    }),
  );
  // A transaction of its own, retried like one on a deadlock or serialization failure.
  const rows = await withRetries(
    () => deps.sql.query<ChangeRow & { ending: number | null }>(Prisma.sql`
      SELECT * FROM tollgate_finish_approvals_if_unchanged(${workspaceId}, ${head.seq}::int, ${endings}::json)`),
  );
  const kind = rows[0]?.kind;
  if (kind === "contended") return kind;
  if (kind !== "approval") return "stale";
  deps.writtenAuditHeads.written(workspaceId, chainedTo);
  return queued.map((each, index) => endedWith(each.opened.approval, writes[index]!, rows.filter((row) => row.ending === index)));
}
