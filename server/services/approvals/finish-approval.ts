// Every ending of a pending approval (a decision, a quorum, a timeout) goes through one
// conditional write, so exactly one ending wins and un-pauses the call chain in its transaction.
import { Prisma } from "../../db/generated/client.ts";
import type { Approval } from "../../db/generated/client.ts";
import { newId } from "../../domain/ids.ts";
import type { DecisionAction } from "../../domain/lifecycle.ts";
import { type Actor } from "../audit.ts";
import { adjustPendingAlongChain, refreshTaskStatuses, type Changes } from "../cascade.ts";
import { lockChains } from "../locks.ts";
import type { ServiceDeps, Tx } from "../deps.ts";
import type { ReceiptSubject } from "../receipts.ts";

/** A value for a nullable JSON column: null or undefined is stored as SQL NULL, not JSON null. */
export const jsonColumn = (value: unknown) => (value === undefined || value === null ? Prisma.DbNull : (value as Prisma.InputJsonValue));

/** What a receipt states, with the approval named by its row's own id. */
type DecisionToSign = Omit<ReceiptSubject, "approvalId"> & { id: string };

/** The signed receipt a tool server verifies before it runs the approved call. */
export function signReceipt(deps: ServiceDeps, decision: DecisionToSign): Promise<string> {
  const { id, ...subject } = decision;
  return deps.receipts.sign({ approvalId: id, ...subject });
}

/** An approval's step in its task's execution trace. */
export function traceApproval(tx: Tx, approval: Approval, type: string, data: unknown, now: Date) {
  return tx.traceEvent.create({
    data: {
      workspaceId: approval.workspaceId,
      sessionId: approval.sessionId,
      taskId: approval.taskId,
      requestId: approval.requestId,
      category: "EXECUTION",
      type,
      name: approval.tool,
      data: jsonColumn(data),
      createdAt: now,
    },
  });
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

/**
 * The conditional write that ends a pending approval by decision or timeout,
 * with everything that must change with it: the receipt, the chain's counts,
 * task statuses, the webhook delivery, the trace and the audit entry. Returns
 * null when the approval was no longer pending (another decision won).
 */
export async function finishApproval(
  deps: ServiceDeps,
  tx: Tx,
  approval: ApprovalWithAgent,
  ending: Ending,
  actor: Actor,
  now: Date,
): Promise<{ approval: Approval; changes: Changes } | null> {
  const { task, ...row } = approval;
  const approvedArgs = (ending.action === "edit" ? ending.args : ending.action === "approve" ? row.proposedArgs : null) as Approval["approvedArgs"];
  const written = {
    status: ending.status,
    decisionAction: ending.action,
    decisionMessage: ending.message ?? null,
    approvedArgs,
    decidedBy: ending.decidedBy,
    decidedById: ending.decidedById,
    deciderKind: ending.deciderKind,
    decidedAt: now,
    // An answer to a question or a form lets nothing run: only a tool call gets a receipt.
    receipt:
      approvedArgs === null || row.kind !== "tool"
        ? null
        : await signReceipt(deps, { ...row, agent: task.agent, approvedArgs, decidedBy: ending.decidedBy, decidedAt: now }),
  };
  // The chain before the approval (lock order, locks.ts); then the conditional write decides who won.
  const chain = await lockChains(tx, [row.requestId]);
  const won = await tx.approval.updateMany({
    where: { id: row.id, status: "PENDING" },
    data: { ...written, approvedArgs: jsonColumn(written.approvedArgs) },
  });
  if (won.count === 0) return null;
  const requestChanges = await adjustPendingAlongChain(tx, row.requestId, -1);
  const changes: Changes = { requests: requestChanges, tasks: await refreshTaskStatuses(tx, requestChanges.map((c) => c.taskId)), approvals: [] };
  // The request's webhook address came with its lock (a request's resumeUrl never changes).
  const resumeUrl = chain.find((link) => link.id === row.requestId)?.resumeUrl;
  if (resumeUrl) {
    await tx.decisionDelivery.create({
      data: { id: newId("dlv"), workspaceId: row.workspaceId, approvalId: row.id, url: resumeUrl, nextAttemptAt: now, createdAt: now },
    });
  }
  await traceApproval(tx, row, "approval.decided", { approvalId: row.id, status: ending.status, action: ending.action, decidedBy: ending.decidedBy }, now);
  await deps.audit.append(tx,
    row.workspaceId,
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
    now,
  );
  // The row as the conditional update left it (it changed nothing else).
  const updated: Approval = { ...row, ...written };
  changes.approvals.push(updated);
  return { approval: updated, changes };
}
