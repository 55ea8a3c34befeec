// The decisions of one request or task as a resumable stream: first those
// decided after the client's last seen one (from the database), then live ones
// from the bus. The client de-duplicates by approval id (invariant 6).
import { on } from "node:events";
import { EventEmitter } from "node:events";
import { approvalResult, type ApprovalResult } from "./approval-views.ts";
import type { ServiceDeps } from "./deps.ts";

export interface DecisionStreamFilter {
  requestId?: string;
  taskId?: string;
  lastEventId?: string | null;
}

export async function* decisionStream(
  deps: ServiceDeps,
  workspaceId: string,
  filter: DecisionStreamFilter,
  signal: AbortSignal | undefined,
): AsyncGenerator<{ cursor: string; result: ApprovalResult }> {
  // Subscribe before reading the backlog so nothing decided in between is lost.
  const live = new EventEmitter();
  const unsubscribe = deps.bus.on("approval:decided", (event) => {
    if (event.workspaceId !== workspaceId) return;
    if (filter.requestId && event.requestId !== filter.requestId) return;
    if (filter.taskId && event.taskId !== filter.taskId) return;
    live.emit("decided", event.approvalId);
  });
  const sent = new Set<string>();
  try {
    const since = filter.lastEventId
      ? await deps.prisma.approval.findFirst({ where: { id: filter.lastEventId, workspaceId }, select: { decidedAt: true } })
      : null;
    const backlog = await deps.prisma.approval.findMany({
      where: {
        workspaceId,
        status: { not: "PENDING" },
        ...(filter.requestId ? { requestId: filter.requestId } : { taskId: filter.taskId }),
        ...(since?.decidedAt ? { decidedAt: { gt: since.decidedAt } } : {}),
      },
      orderBy: [{ decidedAt: "asc" }, { id: "asc" }],
    });
    for (const approval of backlog) {
      sent.add(approval.id);
      yield { cursor: approval.id, result: approvalResult(approval) };
    }
    const stop = AbortSignal.any([signal ?? new AbortController().signal, deps.shutdown]);
    for await (const [approvalId] of on(live, "decided", { signal: stop })) {
      if (sent.has(approvalId as string)) continue;
      const approval = await deps.prisma.approval.findUnique({ where: { id: approvalId as string } });
      if (!approval) continue;
      sent.add(approval.id);
      yield { cursor: approval.id, result: approvalResult(approval) };
    }
  } catch (error) {
    if ((error as Error).name !== "AbortError") throw error;
  } finally {
    unsubscribe();
  }
}
