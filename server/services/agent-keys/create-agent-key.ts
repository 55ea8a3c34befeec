// A new agent key: shown once, stored as its SHA-256 with a recognisable
// prefix, and its decision-webhook secret sealed under the server's secret.
import { agentKeyPrefixOf, newAgentKey } from "../../domain/agent-key-format.ts";
import { newId } from "../../domain/ids.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import { webhookSecretFor } from "../../domain/webhook.ts";
import { sha256 } from "../auth.ts";
import type { ServiceDeps } from "../deps.ts";
import { actorOf, sealWebhookSecret } from "./agent-key-rows.ts";

export async function createAgentKey(deps: ServiceDeps, admin: OperatorPrincipal, name: string) {
  const now = deps.now();
  const id = newId("key");
  const key = newAgentKey();
  const keyPrefix = agentKeyPrefixOf(key);
  await deps.prisma.$transaction(async (tx) => {
    await tx.agentKey.create({
      data: { id, workspaceId: admin.workspaceId, name, keyHash: sha256(key), keyPrefix, webhookSecret: sealWebhookSecret(deps, id, webhookSecretFor(key)), createdAt: now },
    });
    await deps.audit.append(tx, admin.workspaceId, { actor: actorOf(admin), action: "agent_key.created", subjectType: "agent_key", subjectId: id, data: { name, prefix: keyPrefix } }, now);
  });
  return { id, name, key, keyPrefix };
}
