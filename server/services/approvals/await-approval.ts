// An agent waits for the decision on its approval without polling in a loop.
import { notFound } from "../../domain/errors.ts";
import type { AgentPrincipal } from "../../domain/principal.ts";
import { findApproval } from "../authority.ts";
import type { ServiceDeps } from "../deps.ts";
import { approvalResult, approvalResultFromEvent, type ApprovalResult } from "./approval-views.ts";

/**
 * Records that an agent is waiting for this decision. Written at most every
 * third of the liveness window, so a busy poller costs no write per call.
 */
async function markAgentWaiting(deps: ServiceDeps, approvalId: string, seenAt: Date | null): Promise<void> {
  const now = deps.now();
  if (seenAt && now.getTime() - seenAt.getTime() < Math.min(10_000, deps.agentLivenessMs / 3)) return;
  await deps.prisma.approval.updateMany({ where: { id: approvalId, status: "PENDING" }, data: { agentSeenAt: now } });
}

/**
 * Long-poll: answers at once when the approval is decided, else the moment its
 * decision commits on this node (or arrives from another), else after
 * `timeoutMs` with the still-pending status. The decision's event carries the
 * whole decision, so it is answered from the event, as the SDK's held socket
 * is; only an event that came without it (too large for the link between
 * nodes) or a timeout reads the row again.
 */
export async function awaitApproval(
  deps: ServiceDeps,
  agent: AgentPrincipal,
  approvalId: string,
  timeoutMs: number,
): Promise<ApprovalResult> {
  const woken = deps.waiters.wait(approvalId, timeoutMs, deps.shutdown);
  try {
    const approval = await findApproval(deps.prisma, agent, approvalId);
    if (!approval) throw notFound("approval", approvalId);
    if (approval.status !== "PENDING") return approvalResult(approval);
    await markAgentWaiting(deps, approval.id, approval.agentSeenAt);
    const outcome = await woken.promise;
    if (outcome.reason === "decided") {
      deps.metrics?.countPush("long-poll");
      const answer = approvalResultFromEvent(outcome.event, approval);
      if (answer) return answer;
    }
    const current = await deps.prisma.approval.findUniqueOrThrow({ where: { id: approvalId } });
    return approvalResult(current);
  } finally {
    woken.cancel();
  }
}
