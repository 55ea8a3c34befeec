// Revokes an agent key at once on every node: after the commit, the
// agent-key:changed event drops it from every node's cache and closes the
// sockets it holds (server/realtime/socket.ts); its next call is refused.
import { DomainError } from "../../domain/errors.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps } from "../deps.ts";
import { actorOf } from "./agent-key-rows.ts";

export async function revokeAgentKey(deps: ServiceDeps, admin: OperatorPrincipal, keyId: string) {
  const now = deps.now();
  const result = await deps.prisma.$transaction(async (tx) => {
    const key = await tx.agentKey.findFirst({ where: { id: keyId, workspaceId: admin.workspaceId } });
    if (!key) throw new DomainError("NOT_FOUND", `agent key ${keyId} does not exist in this workspace`);
    if (key.revokedAt) return { key, revokedAt: key.revokedAt };
    await tx.agentKey.update({ where: { id: key.id }, data: { revokedAt: now } });
    await deps.audit.append(tx, admin.workspaceId, { actor: actorOf(admin), action: "agent_key.revoked", subjectType: "agent_key", subjectId: key.id, data: { name: key.name } }, now);
    return { key, revokedAt: now };
  });
  deps.bus.publish("agent-key:changed", { workspaceId: admin.workspaceId, agentKeyId: result.key.id, keyHash: result.key.keyHash, revoked: true });
  return { id: result.key.id, revokedAt: result.revokedAt.toISOString() };
}
