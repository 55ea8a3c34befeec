// The workspace's agent keys, oldest first: never their hash or webhook secret.
import type { ServiceDeps } from "../deps.ts";

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
