// Workspace administration: operators, each change audited (agent keys: ./agent-keys/).
import { DomainError, notFound } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import type { OperatorPrincipal, OperatorRoleName } from "../domain/principal.ts";
import { hashPassword } from "./auth.ts";
import type { ServiceDeps } from "./deps.ts";
import { isUniqueViolation } from "./transaction.ts";

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

export async function createOperator(
  deps: ServiceDeps,
  admin: OperatorPrincipal,
  input: { email: string; name: string; role: OperatorRoleName; password: string },
) {
  const now = deps.now();
  const id = newId("op");
  const email = input.email.toLowerCase();
  const passwordHash = await hashPassword(input.password);
  try {
    await deps.prisma.$transaction(async (tx) => {
      await tx.operator.create({ data: { id, workspaceId: admin.workspaceId, email, name: input.name, role: input.role, passwordHash, createdAt: now } });
      await deps.audit.append(tx, admin.workspaceId, { actor: actorOf(admin), action: "operator.created", subjectType: "operator", subjectId: id, data: { email, role: input.role } }, now);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new DomainError("CONFLICT", `an operator with email ${email} already exists`);
    throw error;
  }
  return { id, email, name: input.name, role: input.role };
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
