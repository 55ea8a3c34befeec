// An admin writes a policy rule; it applies to the next approval.request on every node.
import { Prisma, type Policy } from "../../db/generated/client.ts";
import { assertRouteChannelsExist } from "../notifications/route-channels.ts";
import { DomainError } from "../../domain/errors.ts";
import { newId } from "../../domain/ids.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import { type Actor } from "../audit.ts";
import type { ServiceDeps, Tx } from "../deps.ts";
import { isUniqueViolation, transact } from "../transaction.ts";
import { bumpPolicyVersion } from "./policy-cache.ts";
import { nameTaken, nextPriority, ruleFields, type PolicyInput } from "./policy-input.ts";
import { assertValidRule, policyView, ruleOf, type PolicyView } from "./policy-rows.ts";

export const operatorActor = (operator: OperatorPrincipal): Actor => ({ type: "operator", id: operator.operatorId, label: operator.email });

export async function createPolicy(deps: ServiceDeps, operator: OperatorPrincipal, input: PolicyInput): Promise<PolicyView> {
  try {
    return await transact(deps, async (tx) => policyView(await insertPolicy(deps, tx, operator, input, deps.now())));
  } catch (error) {
    if (isUniqueViolation(error)) throw new DomainError("CONFLICT", nameTaken(input.name));
    throw error;
  }
}

/** Inserts a rule inside the caller's transaction (also used for remembered decisions). */
export async function insertPolicy(
  deps: ServiceDeps,
  tx: Tx,
  operator: OperatorPrincipal,
  input: PolicyInput,
  now: Date,
  origin: { sourceApprovalId?: string; priority?: number } = {},
): Promise<Policy> {
  const row: Policy = {
    id: newId("pol"),
    workspaceId: operator.workspaceId,
    ...ruleFields(input),
    priority: origin.priority ?? input.priority ?? (await nextPriority(tx, operator.workspaceId)),
    version: 1,
    sourceApprovalId: origin.sourceApprovalId ?? null,
    matchRewrittenFrom: null,
    createdById: operator.operatorId,
    createdBy: operator.email,
    createdAt: now,
    updatedAt: now,
  };
  assertValidRule(ruleOf(row));
  await assertRouteChannelsExist(tx, operator.workspaceId, ruleOf(row).route);
  const created = await tx.policy.create({ data: { ...row, match: row.match as object, route: row.route ?? Prisma.DbNull, matchRewrittenFrom: Prisma.DbNull } });
  await bumpPolicyVersion(tx, operator.workspaceId);
  await deps.audit.append(tx,
    operator.workspaceId,
    { actor: operatorActor(operator), action: "policy.created", subjectType: "policy", subjectId: created.id, data: policyView(created) },
    now,
  );
  return created;
}
