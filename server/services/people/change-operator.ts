// What an admin changes about another operator: the role, whether they may
// sign in at all, and their password. Each is audited; disabling and a new
// password end every session and token of theirs at once, sockets included.
// A password belongs to the person's account: it is reset only where the
// account belongs to this workspace alone.
// The workspace always keeps an enabled admin.
import { DomainError, notFound } from "../../domain/errors.ts";
import type { OperatorPrincipal, OperatorRoleName } from "../../domain/principal.ts";
import { hashPassword } from "../auth.ts";
import type { ServiceDeps, Tx } from "../deps.ts";
import { announceEndedSessions, endOperatorSessions } from "./end-operator-sessions.ts";

const actorOf = (admin: OperatorPrincipal) => ({ type: "operator" as const, id: admin.operatorId, label: admin.email });

async function findOperator(tx: Tx, admin: OperatorPrincipal, operatorId: string) {
  const operator = await tx.operator.findFirst({ where: { id: operatorId, workspaceId: admin.workspaceId } });
  if (!operator) throw notFound("operator", operatorId);
  return operator;
}

/** Refuses a change that would leave the workspace without an enabled admin. */
async function keepAnAdmin(tx: Tx, workspaceId: string, operatorId: string, change: string): Promise<void> {
  // Locks the workspace's admins, so two admins demoting each other at once cannot both succeed.
  const admins = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM "Operator" WHERE "workspaceId" = ${workspaceId} AND role = 'ADMIN' AND "disabledAt" IS NULL ORDER BY id FOR UPDATE`;
  if (admins.every((admin) => admin.id === operatorId)) {
    throw new DomainError("CONFLICT", `${change} would leave the workspace without an admin; make someone else an admin first`);
  }
}

export async function setOperatorRole(deps: ServiceDeps, admin: OperatorPrincipal, operatorId: string, role: OperatorRoleName) {
  const now = deps.now();
  const changed = await deps.prisma.$transaction(async (tx) => {
    const operator = await findOperator(tx, admin, operatorId);
    if (operator.role === role) return false;
    if (operator.role === "ADMIN" && !operator.disabledAt) await keepAnAdmin(tx, admin.workspaceId, operator.id, `making ${operator.email} ${role.toLowerCase()}`);
    await tx.operator.update({ where: { id: operator.id }, data: { role } });
    await deps.audit.append(tx, admin.workspaceId, { actor: actorOf(admin), action: "operator.role_changed", subjectType: "operator", subjectId: operator.id, data: { email: operator.email, from: operator.role, to: role } }, now);
    return true;
  });
  // Their very next call, on any node, has the new role.
  if (changed) deps.bus.publish("operator:changed", { workspaceId: admin.workspaceId, operatorId });
  return { id: operatorId, role };
}

export async function setOperatorDisabled(deps: ServiceDeps, admin: OperatorPrincipal, operatorId: string, disabled: boolean) {
  const now = deps.now();
  const { result, ended } = await deps.prisma.$transaction(async (tx) => {
    const operator = await findOperator(tx, admin, operatorId);
    if ((operator.disabledAt !== null) === disabled) return { result: { id: operator.id, disabled }, ended: [] };
    if (disabled && operator.role === "ADMIN") await keepAnAdmin(tx, admin.workspaceId, operator.id, `disabling ${operator.email}`);
    await tx.operator.update({ where: { id: operator.id }, data: { disabledAt: disabled ? now : null } });
    const ended = disabled ? await endOperatorSessions(tx, operator.id, now) : [];
    await deps.audit.append(
      tx,
      admin.workspaceId,
      { actor: actorOf(admin), action: disabled ? "operator.disabled" : "operator.enabled", subjectType: "operator", subjectId: operator.id, data: { email: operator.email, sessionsEnded: ended.length } },
      now,
    );
    return { result: { id: operator.id, disabled }, ended };
  });
  announceEndedSessions(deps, admin.workspaceId, ended);
  deps.bus.publish("operator:changed", { workspaceId: admin.workspaceId, operatorId });
  return result;
}

export async function resetOperatorPassword(deps: ServiceDeps, admin: OperatorPrincipal, operatorId: string, password: string) {
  const now = deps.now();
  const passwordHash = await hashPassword(password);
  const { result, ended } = await deps.prisma.$transaction(async (tx) => {
    const operator = await findOperator(tx, admin, operatorId);
    // A password opens every workspace of the account: only an account that
    // belongs to this workspace alone is this admin's to reset.
    const elsewhere = await tx.operator.count({ where: { accountId: operator.accountId, workspaceId: { not: admin.workspaceId } } });
    if (elsewhere > 0) {
      throw new DomainError("CONFLICT", `${operator.email} also works in another workspace, so their password is theirs to change; disable them here instead if their access must end`);
    }
    await tx.account.update({ where: { id: operator.accountId }, data: { passwordHash } });
    const ended = await endOperatorSessions(tx, operator.id, now);
    await deps.audit.append(tx, admin.workspaceId, { actor: actorOf(admin), action: "operator.password_reset", subjectType: "operator", subjectId: operator.id, data: { email: operator.email, sessionsEnded: ended.length } }, now);
    return { result: { id: operator.id, sessionsEnded: ended.length }, ended };
  });
  announceEndedSessions(deps, admin.workspaceId, ended);
  return result;
}
