// Workspace administration: operators, each change audited (agent keys:
// ./agent-keys/; inviting people: ./people/invite-person.ts).
import { notFound } from "../domain/errors.ts";
import type { OperatorPrincipal } from "../domain/principal.ts";
import type { ServiceDeps } from "./deps.ts";

const actorOf = (admin: OperatorPrincipal) => ({ type: "operator" as const, id: admin.operatorId, label: admin.email });

export async function listOperators(deps: ServiceDeps, workspaceId: string) {
  const operators = await deps.prisma.operator.findMany({ where: { workspaceId }, orderBy: { createdAt: "asc" } });
  return operators.map((operator) => ({
    id: operator.id,
    email: operator.email,
    name: operator.name,
    role: operator.role,
    groups: operator.groups,
    disabled: operator.disabledAt !== null,
    createdAt: operator.createdAt.toISOString(),
  }));
}

/** Replaces the groups an operator is in: approvals routed to a group ask its members. */
export async function setOperatorGroups(deps: ServiceDeps, admin: OperatorPrincipal, operatorId: string, groups: string[]) {
  const now = deps.now();
  const unique = [...new Set(groups)].sort();
  return deps.prisma.$transaction(async (tx) => {
    const before = await tx.operator.findFirst({ where: { id: operatorId, workspaceId: admin.workspaceId }, select: { groups: true, email: true } });
    if (!before) throw notFound("operator", operatorId);
    await tx.operator.update({ where: { id: operatorId }, data: { groups: unique } });
    await deps.audit.append(tx, admin.workspaceId, { actor: actorOf(admin), action: "operator.groups_changed", subjectType: "operator", subjectId: operatorId, data: { email: before.email, before: before.groups, after: unique } }, now);
    return { operatorId, groups: unique };
  });
}
