// An admin changes a rule: its version goes up, so decisions name the rule as it was.
import { Prisma } from "../../db/generated/client.ts";
import { DomainError, notFound } from "../../domain/errors.ts";
import { assertRouteChannelsExist } from "../notifications/route-channels.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps } from "../deps.ts";
import { isUniqueViolation, transact } from "../transaction.ts";
import { operatorActor } from "./create-policy.ts";
import { bumpPolicyVersion } from "./policy-cache.ts";
import { nameTaken, ruleFields, type PolicyInput } from "./policy-input.ts";
import { assertValidRule, policyView, ruleOf, type PolicyView } from "./policy-rows.ts";

export async function updatePolicy(
  deps: ServiceDeps,
  operator: OperatorPrincipal,
  policyId: string,
  changes: Partial<PolicyInput>,
): Promise<PolicyView> {
  const now = deps.now();
  try {
    return await transact(deps, async (tx) => {
      const [locked] = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM "Policy" WHERE id = ${policyId} AND "workspaceId" = ${operator.workspaceId} FOR UPDATE`;
      if (!locked) throw notFound("policy", policyId);
      const before = await tx.policy.findUniqueOrThrow({ where: { id: policyId } });
      const current = policyView(before);
      const merged: PolicyInput = {
        ...current,
        expiresAt: current.expiresAt ? new Date(current.expiresAt) : null,
        ...changes,
      };
      const fields = ruleFields(merged);
      const rule = ruleOf({ ...before, ...fields, priority: merged.priority ?? before.priority });
      assertValidRule(rule);
      await assertRouteChannelsExist(tx, operator.workspaceId, rule.route);
      const updated = await tx.policy.update({
        where: { id: policyId },
        data: { ...fields, match: fields.match as object, route: fields.route ?? Prisma.DbNull, matchRewrittenFrom: Prisma.DbNull, priority: merged.priority ?? before.priority, version: { increment: 1 }, updatedAt: now },
      });
      await bumpPolicyVersion(tx, operator.workspaceId);
      await deps.audit.append(tx,
        operator.workspaceId,
        { actor: operatorActor(operator), action: "policy.updated", subjectType: "policy", subjectId: policyId, data: { before: current, after: policyView(updated) } },
        now,
      );
      return policyView(updated);
    });
  } catch (error) {
    if (isUniqueViolation(error) && changes.name) throw new DomainError("CONFLICT", nameTaken(changes.name));
    throw error;
  }
}
