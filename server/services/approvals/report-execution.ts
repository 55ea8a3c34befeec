// An agent reports what it actually ran under an approval, so the record shows
// what was asked, what was approved and what ran.
import { dequal } from "dequal";
import { DomainError, notFound } from "../../domain/errors.ts";
import type { AgentPrincipal } from "../../domain/principal.ts";
import { findApproval } from "../authority.ts";
import type { ServiceDeps } from "../deps.ts";
import { transact } from "../transaction.ts";

/** A value for a nullable json column as text: absent or null is SQL NULL, not a JSON null. */
const jsonText = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(value));

/** Records what the agent actually ran (invariant 9's third record); write-once. */
export async function reportExecution(
  deps: ServiceDeps,
  agent: AgentPrincipal,
  input: { approvalId: string; executedArgs: unknown; result?: unknown; claimKey?: string },
) {
  const now = deps.now();
  const result = await transact(deps, async (tx) => {
    const approval = await findApproval(tx, agent, input.approvalId);
    if (!approval) throw notFound("approval", input.approvalId);
    const ran = approval.status === "APPROVED" || (approval.status === "EXPIRED" && approval.decisionAction === "approve");
    if (!ran) {
      throw new DomainError(
        "PRECONDITION_FAILED",
        `approval ${approval.id} is ${approval.status}${approval.decisionAction ? ` (${approval.decisionAction})` : ""}; the tool may not run, so there is no execution to report`,
      );
    }
    if (approval.executedAt) {
      if (dequal(approval.executedArgs, input.executedArgs)) return { approvalId: approval.id, deviated: approval.executionDeviated ?? false, approval };
      throw new DomainError("CONFLICT", `approval ${approval.id} already has its execution reported at ${approval.executedAt.toISOString()}`);
    }
    if (input.claimKey && approval.executionClaimKey && approval.executionClaimKey !== input.claimKey) {
      throw new DomainError("CONFLICT", `approval ${approval.id}'s execution was claimed by another replica at ${approval.executionClaimedAt?.toISOString()}; only that one may report it`);
    }
    const deviated = !dequal(approval.approvedArgs, input.executedArgs);
    const trace = { approvalId: approval.id, args: input.executedArgs, result: input.result ?? null, deviated };
    // Write-once: of two concurrent reports, the second finds executedAt set.
    // The report and its trace are one statement; json keeps the agent's key order.
    const [reported] = await tx.$queryRaw<{ reported: number }[]>`
      WITH report AS (
        UPDATE "Approval" SET "executedArgs" = ${jsonText(input.executedArgs)}::json, "executionResult" = ${jsonText(input.result)}::json,
          "executedAt" = ${now}::timestamp(3), "executionDeviated" = ${deviated}
        WHERE id = ${approval.id} AND "executedAt" IS NULL
        RETURNING id, "workspaceId", "sessionId", "taskId", "requestId", tool
      ), traced AS (
        INSERT INTO "TraceEvent" ("workspaceId", "sessionId", "taskId", "requestId", category, type, name, data, "createdAt")
        SELECT "workspaceId", "sessionId", "taskId", "requestId", 'EXECUTION', 'tool.executed', tool, ${JSON.stringify(trace)}::json, ${now}::timestamp(3) FROM report
      )
      SELECT count(*)::int AS reported FROM report`;
    if (reported?.reported !== 1) {
      const current = await tx.approval.findUniqueOrThrow({ where: { id: approval.id } });
      if (dequal(current.executedArgs, input.executedArgs)) return { approvalId: approval.id, deviated: current.executionDeviated ?? false, approval: current };
      throw new DomainError("CONFLICT", `approval ${approval.id} already has its execution reported at ${current.executedAt!.toISOString()}`);
    }
    if (deviated) {
      await deps.audit.append(
        tx,
        approval.workspaceId,
        {
          actor: { type: "agent", id: agent.agentKeyId, label: agent.keyName },
          action: "approval.execution_deviated",
          subjectType: "approval",
          subjectId: approval.id,
          data: { tool: approval.tool, approvedArgs: approval.approvedArgs, executedArgs: input.executedArgs },
        },
        now,
      );
    }
    return { approvalId: approval.id, deviated, approval };
  });
  deps.bus.publish("approval:executed", { workspaceId: agent.workspaceId, approvalId: result.approvalId, sessionId: result.approval.sessionId, taskId: result.approval.taskId, deviated: result.deviated });
  return { approvalId: result.approvalId };
}
