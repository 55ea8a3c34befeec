// An admin deletes a rule (or revokes a remembered decision). Approvals it
// decided keep its name and version; the audit log keeps the rule itself.
import { notFound } from "../../domain/errors.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps } from "../deps.ts";
import { transact } from "../transaction.ts";
import { operatorActor } from "./create-policy.ts";
import { bumpPolicyVersion } from "./policy-cache.ts";
import { policyView } from "./policy-rows.ts";

export async function deletePolicy(deps: ServiceDeps, operator: OperatorPrincipal, policyId: string): Promise<{ policyId: string; deleted: true }> {
  const now = deps.now();
  return transact(deps, async (tx) => {
    const existing = await tx.policy.findFirst({ where: { id: policyId, workspaceId: operator.workspaceId } });
    if (!existing) throw notFound("policy", policyId);
    const { count } = await tx.policy.deleteMany({ where: { id: policyId, workspaceId: operator.workspaceId } });
    // Deleted concurrently by someone else: the same outcome, reported once.
    if (count === 0) throw notFound("policy", policyId);
    await bumpPolicyVersion(tx, operator.workspaceId);
    await deps.audit.append(tx,
      operator.workspaceId,
      { actor: operatorActor(operator), action: "policy.deleted", subjectType: "policy", subjectId: policyId, data: policyView(existing) },
      now,
    );
    return { policyId, deleted: true as const };
  });
}
