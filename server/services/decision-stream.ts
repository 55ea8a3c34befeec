// The decisions of one request or task as a resumable stream: first those
// decided after the client's last seen one (from the database), then live ones
// from the bus. Events that arrive while the backlog is read are queued, not
// dropped; the client de-duplicates by approval id (invariant 6).
import { DomainError, notFound } from "../domain/errors.ts";
import type { AgentPrincipal } from "../domain/principal.ts";
import type { DecidedEvent } from "../events/waiters.ts";
import { approvalResult, approvalResultFromEvent, type ApprovalResult } from "./approvals/approval-views.ts";
import { findRequest, findTask } from "./authority.ts";
import type { ServiceDeps } from "./deps.ts";

export interface DecisionStreamFilter {
  requestId?: string;
  taskId?: string;
  lastEventId?: string | null;
}

/**
 * Opens the stream an agent subscribes to: of a request or task it may act on,
 * else NOT_FOUND. The check runs before the stream is handed back, so a refusal
 * is an ordinary error answer, not a failure in the middle of a stream.
 */
export async function openAgentDecisionStream(
  deps: ServiceDeps,
  agent: AgentPrincipal,
  filter: DecisionStreamFilter,
  signal: AbortSignal | undefined,
): Promise<AsyncGenerator<{ cursor: string; result: ApprovalResult }>> {
  if (filter.requestId) {
    if (!(await findRequest(deps.prisma, agent.workspaceId, filter.requestId, agent))) throw notFound("request", filter.requestId);
  } else if (filter.taskId) {
    if (!(await findTask(deps.prisma, agent, filter.taskId))) throw notFound("task", filter.taskId);
  } else {
    throw new DomainError("BAD_INPUT", "give exactly one of requestId or taskId: a stream covers one request or one task");
  }
  const scope = filter.requestId ? { requestId: filter.requestId } : { taskId: filter.taskId! };
  return markingAgentWaiting(deps, agent.workspaceId, scope, decisionStream(deps, agent.workspaceId, filter, signal));
}

/**
 * While an agent holds the stream open, it is waiting for the decisions of
 * the stream's pending approvals: refreshed on open and every third of the
 * liveness window, so the console does not call it gone.
 */
async function* markingAgentWaiting<T>(deps: ServiceDeps, workspaceId: string, scope: { requestId: string } | { taskId: string }, inner: AsyncGenerator<T>): AsyncGenerator<T> {
  const mark = () =>
    deps.prisma.approval.updateMany({ where: { workspaceId, ...scope, status: "PENDING" }, data: { agentSeenAt: deps.now() } }).catch(() => undefined);
  await mark();
  const timer = setInterval(() => void mark(), Math.min(10_000, deps.agentLivenessMs / 3));
  try {
    yield* inner;
  } finally {
    clearInterval(timer);
  }
}

export async function* decisionStream(
  deps: ServiceDeps,
  workspaceId: string,
  filter: DecisionStreamFilter,
  signal: AbortSignal | undefined,
): AsyncGenerator<{ cursor: string; result: ApprovalResult }> {
  // Subscribe before reading the backlog; everything published from now on is queued.
  const queue: DecidedEvent[] = [];
  let wake: (() => void) | undefined;
  const unsubscribe = deps.bus.on("approval:decided", (event) => {
    if (event.workspaceId !== workspaceId) return;
    if (filter.requestId && event.requestId !== filter.requestId) return;
    if (filter.taskId && event.taskId !== filter.taskId) return;
    queue.push(event);
    wake?.();
  });
  const stop = AbortSignal.any([signal ?? new AbortController().signal, deps.shutdown]);
  const onStop = () => wake?.();
  stop.addEventListener("abort", onStop);
  const sent = new Set<string>();
  try {
    const scope = filter.requestId ? { requestId: filter.requestId } : { taskId: filter.taskId };
    // Only an approval of this stream marks where to resume.
    const since = filter.lastEventId
      ? await deps.prisma.approval.findFirst({ where: { id: filter.lastEventId, workspaceId, ...scope }, select: { id: true, decidedAt: true } })
      : null;
    const backlog = await deps.prisma.approval.findMany({
      where: {
        workspaceId,
        status: { not: "PENDING" },
        ...scope,
        // Resume strictly after the last one seen, in (decidedAt, id) order:
        // several approvals can end at the same instant (one sweep, one cancel).
        ...(since?.decidedAt
          ? { OR: [{ decidedAt: { gt: since.decidedAt } }, { decidedAt: since.decidedAt, id: { gt: since.id } }] }
          : {}),
      },
      orderBy: [{ decidedAt: "asc" }, { id: "asc" }],
    });
    for (const approval of backlog) {
      sent.add(approval.id);
      deps.metrics?.countPush("stream");
      yield { cursor: approval.id, result: approvalResult(approval) };
    }
    while (!stop.aborted) {
      const event = queue.shift();
      if (event === undefined) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      if (sent.has(event.approvalId)) continue;
      // The event carries the whole decision; only one that came without it is read again.
      let result = approvalResultFromEvent(event);
      if (!result) {
        const approval = await deps.prisma.approval.findUnique({ where: { id: event.approvalId } });
        if (!approval || approval.status === "PENDING") continue;
        result = approvalResult(approval);
      }
      sent.add(event.approvalId);
      deps.metrics?.countPush("stream");
      yield { cursor: event.approvalId, result };
    }
  } finally {
    stop.removeEventListener("abort", onStop);
    unsubscribe();
  }
}
