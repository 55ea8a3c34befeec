// An agent reports that a decided call did not run, and why (its framework
// dropped it, or a rejection ended the run): the record never shows an
// APPROVED call that silently did not run.
import { DomainError, notFound } from "../../domain/errors.ts";
import type { AgentPrincipal } from "../../domain/principal.ts";
import { findApproval } from "../authority.ts";
import type { ServiceDeps } from "../deps.ts";
import { transact } from "../transaction.ts";

/**
 * Write-once, like the execution report, and exclusive with it: a call
 * reported as not run takes the execution claim, so it never runs later either.
 */
export async function reportNotRun(deps: ServiceDeps, agent: AgentPrincipal, input: { approvalId: string; reason: string }): Promise<{ approvalId: string; reason: string }> {
  const now = deps.now();
  return transact(deps, async (tx) => {
    const approval = await findApproval(tx, agent, input.approvalId);
    if (!approval) throw notFound("approval", input.approvalId);
    if (approval.status === "PENDING") {
      throw new DomainError("PRECONDITION_FAILED", `approval ${approval.id} is still pending; a call is reported as not run once it is decided`);
    }
    if (approval.executedAt) {
      throw new DomainError("CONFLICT", `approval ${approval.id} already has its execution reported at ${approval.executedAt.toISOString()}: it ran`);
    }
    if (approval.notRunReason !== null) {
      if (approval.notRunReason === input.reason) return { approvalId: approval.id, reason: approval.notRunReason };
      throw new DomainError("CONFLICT", `approval ${approval.id} was already reported as not run: ${approval.notRunReason}`);
    }
    const claimKey = `not-run:${approval.id}`;
    const written = await tx.approval.updateMany({
      where: { id: approval.id, executedAt: null, notRunReason: null, OR: [{ executionClaimKey: null }, { executionClaimKey: claimKey }] },
      data: { notRunReason: input.reason, executionClaimKey: claimKey, executionClaimedAt: approval.executionClaimedAt ?? now },
    });
    if (written.count !== 1) {
      throw new DomainError("CONFLICT", `approval ${approval.id}'s execution was claimed at ${approval.executionClaimedAt?.toISOString()}; only its claimant knows whether it ran`);
    }
    await tx.traceEvent.create({
      data: {
        workspaceId: approval.workspaceId,
        sessionId: approval.sessionId,
        taskId: approval.taskId,
        requestId: approval.requestId,
        category: "EXECUTION",
        type: "tool.not-run",
        name: approval.tool,
        data: { approvalId: approval.id, reason: input.reason },
        createdAt: now,
      },
    });
    return { approvalId: approval.id, reason: input.reason };
  });
}
