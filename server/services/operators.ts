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

/**
 * Adds a person to the admin's workspace. A new email gets an account with the
 * given first password; an email that already has an account (the person
 * works in another workspace too) keeps its own password, so none may be
 * given: no admin can set the password of someone another workspace relies on.
 */
export async function createOperator(
  deps: ServiceDeps,
  admin: OperatorPrincipal,
  input: { email: string; name: string; role: OperatorRoleName; password?: string },
) {
  const now = deps.now();
  const id = newId("op");
  const email = input.email.toLowerCase();
  const passwordHash = input.password === undefined ? undefined : await hashPassword(input.password);
  try {
    await deps.prisma.$transaction(async (tx) => {
      const existing = await tx.account.findUnique({ where: { email }, select: { id: true } });
      if (existing && passwordHash) {
        throw new DomainError("CONFLICT", `${email} already has a Tollgate account with its own password: add them without a password`, { field: "password" });
      }
      if (!existing && !passwordHash) {
        throw new DomainError("BAD_INPUT", `password: ${email} is new to Tollgate and needs a first password`, { field: "password" });
      }
      const accountId = existing?.id ?? newId("acc");
      if (!existing) await tx.account.create({ data: { id: accountId, email, passwordHash: passwordHash!, createdAt: now } });
      await tx.operator.create({ data: { id, workspaceId: admin.workspaceId, accountId, email, name: input.name, role: input.role, createdAt: now } });
      await deps.audit.append(tx, admin.workspaceId, { actor: actorOf(admin), action: "operator.created", subjectType: "operator", subjectId: id, data: { email, role: input.role, existingAccount: Boolean(existing) } }, now);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new DomainError("CONFLICT", `${email} is already in this workspace`);
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
