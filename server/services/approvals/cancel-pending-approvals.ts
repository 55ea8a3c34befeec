// When requests end (failed, canceled, their task canceled), their pending
// approvals end with them in the same transaction.
import { type Actor } from "../audit.ts";
import { adjustPendingAlongChains, mergeChanges, noChanges, refreshTaskStatuses, type Changes } from "../cascade.ts";
import type { ServiceDeps, Tx } from "../deps.ts";
import { lockPendingApprovals } from "../locks.ts";

/**
 * Cancels the pending approvals on these requests, inside the caller's
 * transaction (which holds the requests' chain locks, see locks.ts), in a fixed number of statements however many there are (a
 * canceled task tree can hold thousands); the caller publishes the returned
 * changes after commit. No webhook is sent: the request itself ended.
 */
export async function cancelPendingApprovalsOf(deps: ServiceDeps, tx: Tx, requestIds: string[], actor: Actor, now: Date, reason: string): Promise<Changes> {
  const changes = noChanges();
  if (requestIds.length === 0) return changes;
  // Locked first (after the requests' chains, which the caller holds), so a
  // decision racing with the cancellation waits and then finds them ended.
  const ids = await lockPendingApprovals(tx, requestIds);
  if (ids.length === 0) return changes;
  const pending = await tx.approval.findMany({ where: { id: { in: ids } } });
  const written = {
    status: "CANCELED" as const,
    decisionAction: null,
    decisionMessage: reason,
    decidedBy: actor.label,
    decidedById: actor.type === "operator" ? actor.id : null,
    decidedAt: now,
  };
  await tx.approval.updateMany({ where: { id: { in: ids } }, data: written });
  const perRequest = new Map<string, number>();
  for (const approval of pending) perRequest.set(approval.requestId, (perRequest.get(approval.requestId) ?? 0) - 1);
  const requestChanges = await adjustPendingAlongChains(tx, [...perRequest].map(([requestId, delta]) => ({ requestId, delta })));
  mergeChanges(changes, { requests: requestChanges, tasks: await refreshTaskStatuses(tx, requestChanges.map((change) => change.taskId)) });
  await tx.traceEvent.createMany({
    data: pending.map((approval) => ({
      workspaceId: approval.workspaceId,
      sessionId: approval.sessionId,
      taskId: approval.taskId,
      requestId: approval.requestId,
      category: "EXECUTION" as const,
      type: "approval.decided",
      name: approval.tool,
      data: { approvalId: approval.id, status: "CANCELED", action: null, decidedBy: actor.label },
      createdAt: now,
    })),
  });
  await deps.audit.appendMany(tx,
    pending[0]!.workspaceId,
    pending.map((approval) => ({
      actor,
      action: "approval.canceled",
      subjectType: "approval",
      subjectId: approval.id,
      data: { status: "CANCELED", action: null, message: reason, tool: approval.tool },
    })),
    now,
  );
  changes.approvals.push(...pending.map((approval) => ({ ...approval, ...written })));
  return changes;
}
