// "Approve, and approve this from now on": an operator's decision becomes a
// policy rule that approves this tool for this agent.
import type { Approval } from "../../db/generated/client.ts";
import { DomainError } from "../../domain/errors.ts";
import { LIMITS } from "../../domain/json.ts";
import type { DecisionAction } from "../../domain/lifecycle.ts";
import { exactGlob, LAST_PRIORITY, type Condition } from "../../domain/policy.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps, Tx } from "../deps.ts";
import { insertPolicy } from "../policies/create-policy.ts";
import type { ApprovalWithAgent } from "./finish-approval.ts";

export interface RememberInput {
  /** This session only, the next hour, or until revoked. */
  scope: "session" | "hour" | "always";
  /** Narrows the remembered rule to calls whose arguments also satisfy these. */
  args?: Condition[];
}

/**
 * Who may turn a decision into a rule: approvers for this session or the next
 * hour, admins for always; never for an approval that needs several
 * approvers, which one person's rule would bypass.
 */
export function assertMayRemember(operator: OperatorPrincipal, approval: Approval, input: { action: DecisionAction; remember?: RememberInput }): void {
  if (input.action !== "approve") throw new DomainError("BAD_INPUT", `remember goes with "approve" only; "${input.action}" cannot be remembered`);
  if (approval.requiredApprovals > 1) {
    throw new DomainError("FORBIDDEN", `approval ${approval.id} needs ${approval.requiredApprovals} approvers; one person cannot remember it as a rule`);
  }
  if (input.remember!.scope === "always" && operator.role !== "ADMIN") {
    throw new DomainError("FORBIDDEN", `only admins may remember a decision for always; ${operator.email} is ${operator.role} (remember it for this session or the next hour instead)`);
  }
}

const REMEMBER_HOUR_MS = 3600_000;

/**
 * Writes the remembered decision as a policy rule that approves this tool for
 * this agent. It sits just above the rule that asked for a person (so rules
 * an admin placed before that one still win), or after every written rule
 * when the workspace default applied.
 */
export async function rememberDecision(deps: ServiceDeps, tx: Tx, operator: OperatorPrincipal, approval: ApprovalWithAgent, remember: RememberInput, now: Date) {
  const source = approval.policyId ? await tx.policy.findUnique({ where: { id: approval.policyId }, select: { priority: true } }) : null;
  const scope = { session: "in this session", hour: "for an hour", always: "always" }[remember.scope];
  const label = `Allow ${approval.tool} for ${approval.task.agent} ${scope}`;
  const policy = await insertPolicy(
    deps,
    tx,
    operator,
    {
      name: `${label.slice(0, LIMITS.nameChars - approval.id.length - 8)} (from ${approval.id})`,
      match: {
        agent: exactGlob(approval.task.agent),
        tool: exactGlob(approval.tool),
        ...(remember.scope === "session" ? { sessionId: approval.sessionId } : {}),
        ...(remember.args?.length ? { args: remember.args } : {}),
      },
      outcome: "approve",
      expiresAt: remember.scope === "hour" ? new Date(now.getTime() + REMEMBER_HOUR_MS) : null,
    },
    now,
    { sourceApprovalId: approval.id, priority: source?.priority ?? LAST_PRIORITY },
  );
  return { policyId: policy.id, name: policy.name };
}
