// Replaces the agent-name globs whose work a key may act on besides its own
// (server/domain/authority.ts). Every node reads the key again at its next call.
import { DomainError } from "../../domain/errors.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps } from "../deps.ts";
import { actorOf } from "./agent-key-rows.ts";

export async function setAgentKeyTrust(deps: ServiceDeps, admin: OperatorPrincipal, keyId: string, trustedAgents: string[]) {
  const now = deps.now();
  const globs = [...new Set(trustedAgents)];
  const updated = await deps.prisma.$transaction(async (tx) => {
    const key = await tx.agentKey.findFirst({ where: { id: keyId, workspaceId: admin.workspaceId } });
    if (!key) throw new DomainError("NOT_FOUND", `agent key ${keyId} does not exist in this workspace`);
    await tx.agentKey.update({ where: { id: key.id }, data: { trustedAgents: globs } });
    await deps.audit.append(
      tx,
      admin.workspaceId,
      { actor: actorOf(admin), action: "agent_key.trust_changed", subjectType: "agent_key", subjectId: key.id, data: { name: key.name, from: key.trustedAgents, to: globs } },
      now,
    );
    return key;
  });
  deps.bus.publish("agent-key:changed", { workspaceId: admin.workspaceId, agentKeyId: updated.id, keyHash: updated.keyHash, revoked: false });
  return { id: updated.id, trustedAgents: globs };
}
