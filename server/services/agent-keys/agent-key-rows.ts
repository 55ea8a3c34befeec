// What the agent-key use cases share: the audit actor, and the sealing of a
// key's decision-webhook secret (derived from the key, so it must not sit in
// the database in the clear: whoever read it could sign decisions).
import { SEALED_PREFIX } from "../../secret-box.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps } from "../deps.ts";
import type { Tx } from "../deps.ts";

export const actorOf = (admin: OperatorPrincipal) => ({ type: "operator" as const, id: admin.operatorId, label: admin.email });

const context = (keyId: string) => `agent_key:${keyId}:webhookSecret`;

export const sealWebhookSecret = (deps: Pick<ServiceDeps, "webhookSecrets">, keyId: string, secret: string) => deps.webhookSecrets.seal(secret, context(keyId));

/** The secret to sign a key's webhooks with; undefined when it cannot be opened (another server secret). */
export function openWebhookSecret(deps: Pick<ServiceDeps, "webhookSecrets">, keyId: string, stored: string): string | undefined {
  return deps.webhookSecrets.open(stored, context(keyId));
}

/**
 * Seals the webhook secrets stored before they were sealed (a database from an
 * earlier version): run at start, idempotent, each row on its own.
 */
export async function sealStoredWebhookSecrets(deps: Pick<ServiceDeps, "prisma" | "webhookSecrets">, tx?: Tx): Promise<number> {
  const prisma = tx ?? deps.prisma;
  const clear = await prisma.agentKey.findMany({ where: { NOT: { webhookSecret: { startsWith: SEALED_PREFIX } } }, select: { id: true, webhookSecret: true } });
  for (const key of clear) {
    await prisma.agentKey.updateMany({ where: { id: key.id, webhookSecret: key.webhookSecret }, data: { webhookSecret: sealWebhookSecret(deps, key.id, key.webhookSecret) } });
  }
  return clear.length;
}
