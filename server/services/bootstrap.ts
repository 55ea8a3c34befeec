// First start on an empty database: the workspace, the first admin and the
// first agent key. Values missing from the environment are generated and
// returned once so the server can print them.
import { agentKeyPrefixOf, newAgentKey } from "../domain/agent-key-format.ts";
import { sealWebhookSecret } from "./agent-keys/agent-key-rows.ts";
import { randomBytes } from "node:crypto";
import { newId } from "../domain/ids.ts";
import { webhookSecretFor } from "../domain/webhook.ts";
import { SYSTEM_ACTOR } from "./audit.ts";
import { hashPassword, randomToken, sha256 } from "./auth.ts";
import type { ServiceDeps } from "./deps.ts";

export interface BootstrapOptions {
  workspaceName: string;
  adminEmail?: string;
  adminPassword?: string;
  agentKey?: string;
}

export interface BootstrapResult {
  created: boolean;
  workspaceId: string;
  /** Set only when this start created them, so they can be shown once. */
  admin?: { email: string; password: string; generated: boolean };
  agentKey?: { key: string; generated: boolean };
}

export async function bootstrapWorkspace(deps: ServiceDeps, options: BootstrapOptions): Promise<BootstrapResult> {
  const existing = await deps.prisma.workspace.findFirst({ orderBy: { createdAt: "asc" } });
  if (existing) return { created: false, workspaceId: existing.id };

  const now = deps.now();
  const workspaceId = newId("ws");
  const adminEmail = (options.adminEmail ?? "admin@tollgate.local").toLowerCase();
  const adminPassword = options.adminPassword ?? randomBytes(12).toString("base64url");
  const agentKey = options.agentKey ?? newAgentKey();
  const passwordHash = await hashPassword(adminPassword);
  const signingKey = await deps.receipts.prepareKey(workspaceId, now);

  await deps.prisma.$transaction(async (tx) => {
    // Two nodes starting on one empty database: the lock makes the second wait
    // and then see the first one's workspace.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('tollgate:bootstrap'))`;
    if (await tx.workspace.findFirst()) return;
    await tx.workspace.create({ data: { id: workspaceId, name: options.workspaceName, createdAt: now } });
    await tx.signingKey.create({ data: signingKey.row });
    const adminId = newId("op");
    const accountId = newId("acc");
    await tx.account.create({ data: { id: accountId, email: adminEmail, passwordHash, createdAt: now } });
    await tx.operator.create({
      data: { id: adminId, workspaceId, accountId, email: adminEmail, name: "Administrator", role: "ADMIN", createdAt: now },
    });
    const keyId = newId("key");
    await tx.agentKey.create({
      data: {
        id: keyId,
        workspaceId,
        name: "bootstrap",
        keyHash: sha256(agentKey),
        keyPrefix: agentKeyPrefixOf(agentKey),
        webhookSecret: sealWebhookSecret(deps, keyId, webhookSecretFor(agentKey)),
        createdAt: now,
      },
    });
    await deps.audit.append(tx, workspaceId, { actor: SYSTEM_ACTOR, action: "workspace.created", subjectType: "workspace", subjectId: workspaceId, data: { name: options.workspaceName } }, now);
    await deps.audit.append(tx, workspaceId, { actor: SYSTEM_ACTOR, action: "operator.created", subjectType: "operator", subjectId: adminId, data: { email: adminEmail, role: "ADMIN" } }, now);
    await deps.audit.append(tx, workspaceId, { actor: SYSTEM_ACTOR, action: "agent_key.created", subjectType: "agent_key", subjectId: keyId, data: { name: "bootstrap", prefix: agentKeyPrefixOf(agentKey) } }, now);
  });

  const winner = await deps.prisma.workspace.findFirstOrThrow({ orderBy: { createdAt: "asc" } });
  if (winner.id !== workspaceId) return { created: false, workspaceId: winner.id };
  deps.receipts.adopt(signingKey);
  return {
    created: true,
    workspaceId,
    admin: { email: adminEmail, password: adminPassword, generated: !options.adminPassword },
    agentKey: { key: agentKey, generated: !options.agentKey },
  };
}
