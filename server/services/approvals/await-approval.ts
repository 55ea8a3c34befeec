// An agent waits for the decision on its approval without polling in a loop.
import { notFound } from "../../domain/errors.ts";
import type { AgentPrincipal } from "../../domain/principal.ts";
import { findApproval } from "../authority.ts";
import type { ServiceDeps } from "../deps.ts";
import { approvalResult, approvalResultFromEvent, type ApprovalResult } from "./approval-views.ts";

/** How often a waiting agent's presence is written at most: a busy poller costs no write per call. */
const seenEvery = (livenessMs: number) => Math.min(10_000, livenessMs / 3);

/** Records that an agent is waiting for this decision. */
async function markAgentWaiting(deps: ServiceDeps, approvalId: string, seenAt: Date | null): Promise<void> {
  const now = deps.now();
  if (seenAt && now.getTime() - seenAt.getTime() < seenEvery(deps.agentLivenessMs)) return;
  await deps.prisma.approval.updateMany({ where: { id: approvalId, status: "PENDING" }, data: { agentSeenAt: now } });
}

/**
 * The longest one long-poll is held. The console shows an agent as waiting
 * only while it asked within the liveness window, and a held poll is not
 * asking: a poll held longer than the window, less the write's spacing and a
 * second for the agent to ask again, would show a waiting agent as gone. With
 * the default window (90 s) the API's 60 s limit is below this.
 */
export const longestPollMs = (livenessMs: number) => Math.max(500, livenessMs - seenEvery(livenessMs) - 1_000);

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
  const woken = deps.waiters.wait(approvalId, Math.min(timeoutMs, longestPollMs(deps.agentLivenessMs)), deps.shutdown);
  try {
    // A prepared statement: on the embedded database Prisma's own path parses and plans it at every poll.
    const approval = await findApproval(deps.sql, agent, approvalId);
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
