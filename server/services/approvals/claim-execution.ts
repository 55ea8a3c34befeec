// The tool runs at most once per approval across every replica of an agent: the
// replica that wants to run it first takes the approval's one execution claim.
import { DomainError, notFound } from "../../domain/errors.ts";
import type { AgentPrincipal } from "../../domain/principal.ts";
import { findApproval } from "../authority.ts";
import type { ServiceDeps } from "../deps.ts";
import { transact } from "../transaction.ts";

export type ExecutionClaim =
  | { approvalId: string; granted: true; claimedAt: string }
  | { approvalId: string; granted: false; claimedAt: string; execution: { args: unknown; result: unknown; at: string } | null };

/**
 * Grants the execution claim to the first caller (a retry with the same
 * claimKey is granted again, so a lost answer does not strand the tool);
 * every other caller is told when it was claimed and, once reported, what ran.
 * A claimant that dies before reporting leaves the tool unrun: at most once.
 */
export async function claimExecution(deps: ServiceDeps, agent: AgentPrincipal, input: { approvalId: string; claimKey: string }): Promise<ExecutionClaim> {
  const now = deps.now();
  return transact(deps, async (tx) => {
    const approval = await findApproval(tx, agent, input.approvalId);
    if (!approval) throw notFound("approval", input.approvalId);
    const mayRun = approval.status === "APPROVED" || (approval.status === "EXPIRED" && approval.decisionAction === "approve");
    if (!mayRun) {
      throw new DomainError(
        "PRECONDITION_FAILED",
        `approval ${approval.id} is ${approval.status}${approval.decisionAction ? ` (${approval.decisionAction})` : ""}; the tool may not run, so there is nothing to claim`,
      );
    }
    // Write-once, like the decision: of two concurrent claims the second finds
    // the key set. The claim and its trace are one statement.
    const [claimed] = await tx.$queryRaw<{ claimed: number }[]>`
      WITH claim AS (
        UPDATE "Approval" SET "executionClaimKey" = ${input.claimKey}, "executionClaimedAt" = ${now}::timestamp(3)
        WHERE id = ${approval.id} AND "executionClaimKey" IS NULL AND "executedAt" IS NULL
        RETURNING id, "workspaceId", "sessionId", "taskId", "requestId", tool
      ), traced AS (
        INSERT INTO "TraceEvent" ("workspaceId", "sessionId", "taskId", "requestId", category, type, name, data, "createdAt")
        SELECT "workspaceId", "sessionId", "taskId", "requestId", 'EXECUTION', 'tool.claimed', tool, json_build_object('approvalId', id), ${now}::timestamp(3) FROM claim
      )
      SELECT count(*)::int AS claimed FROM claim`;
    if (claimed?.claimed === 1) return { approvalId: approval.id, granted: true, claimedAt: now.toISOString() };
    const current = await tx.approval.findUniqueOrThrow({ where: { id: approval.id } });
    const claimedAt = (current.executionClaimedAt ?? current.executedAt ?? now).toISOString();
    if (current.executionClaimKey === input.claimKey && !current.executedAt) return { approvalId: approval.id, granted: true, claimedAt };
    const execution = current.executedAt
      ? { args: current.executedArgs ?? null, result: current.executionResult ?? null, at: current.executedAt.toISOString() }
      : null;
    return { approvalId: approval.id, granted: false, claimedAt, execution };
  });
}
