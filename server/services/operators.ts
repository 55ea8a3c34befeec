// Workspace administration: operators and agent keys, each change audited.
import { DomainError, notFound } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import type { OperatorPrincipal, OperatorRoleName } from "../domain/principal.ts";
import { webhookSecretFor } from "../domain/webhook.ts";
import { forgetAgentKey, hashPassword, randomToken, sha256 } from "./auth.ts";
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

/** A new agent key; the key itself is returned once and only its hash is kept. */
export async function createAgentKey(deps: ServiceDeps, admin: OperatorPrincipal, name: string) {
  const now = deps.now();
  const id = newId("key");
  const key = randomToken("tgk");
  await deps.prisma.$transaction(async (tx) => {
    await tx.agentKey.create({
      data: { id, workspaceId: admin.workspaceId, name, keyHash: sha256(key), keyPrefix: key.slice(0, 8), webhookSecret: webhookSecretFor(key), createdAt: now },
    });
    await deps.audit.append(tx, admin.workspaceId, { actor: actorOf(admin), action: "agent_key.created", subjectType: "agent_key", subjectId: id, data: { name, prefix: key.slice(0, 8) } }, now);
  });
  return { id, name, key };
}

/** The workspace's agent keys, oldest first; never their hash or webhook secret. */
export async function listAgentKeys(deps: ServiceDeps, workspaceId: string) {
  const keys = await deps.prisma.agentKey.findMany({
    where: { workspaceId },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: { id: true, name: true, keyPrefix: true, createdAt: true, lastUsedAt: true, revokedAt: true, trustedAgents: true },
  });
  return keys.map((key) => ({
    id: key.id,
    name: key.name,
    keyPrefix: key.keyPrefix,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
    trustedAgents: key.trustedAgents,
  }));
}

/**
 * Replaces the agent-name globs whose work the key may act on besides its own
 * (server/domain/authority.ts). Takes effect at once on this node; other nodes
 * read the key again within their cache time.
 */
export async function setAgentKeyTrust(deps: ServiceDeps, admin: OperatorPrincipal, keyId: string, trustedAgents: string[]) {
  const now = deps.now();
  const globs = [...new Set(trustedAgents)];
  const updated = await deps.prisma.$transaction(async (tx) => {
    const key = await tx.agentKey.findFirst({ where: { id: keyId, workspaceId: admin.workspaceId } });
    if (!key) throw new DomainError("NOT_FOUND", `agent key ${keyId} does not exist in this workspace`);
    await tx.agentKey.update({ where: { id: key.id }, data: { trustedAgents: globs } });
    await deps.audit.append(tx,
      admin.workspaceId,
      { actor: actorOf(admin), action: "agent_key.trust_changed", subjectType: "agent_key", subjectId: key.id, data: { name: key.name, from: key.trustedAgents, to: globs } },
      now,
    );
    return key;
  });
  forgetAgentKey(deps, updated.keyHash);
  return { id: updated.id, trustedAgents: globs };
}

export async function revokeAgentKey(deps: ServiceDeps, admin: OperatorPrincipal, keyId: string) {
  const now = deps.now();
  return deps.prisma.$transaction(async (tx) => {
    const key = await tx.agentKey.findFirst({ where: { id: keyId, workspaceId: admin.workspaceId } });
    if (!key) throw new DomainError("NOT_FOUND", `agent key ${keyId} does not exist in this workspace`);
    if (key.revokedAt) return { id: key.id, revokedAt: key.revokedAt.toISOString() };
    await tx.agentKey.update({ where: { id: key.id }, data: { revokedAt: now } });
    await deps.audit.append(tx, admin.workspaceId, { actor: actorOf(admin), action: "agent_key.revoked", subjectType: "agent_key", subjectId: key.id, data: { name: key.name } }, now);
    return { id: key.id, revokedAt: now.toISOString() };
  });
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
