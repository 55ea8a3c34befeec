// A new workspace, made by an admin who becomes its first admin. It starts
// empty: its own agent keys, policies, channels and people are added there.
// Both audit logs record it: the new workspace's (naming only itself), and the
// one it was made from. Its receipt signing key is made with it.
import { newId } from "../../domain/ids.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps } from "../deps.ts";

export async function createWorkspace(deps: ServiceDeps, admin: OperatorPrincipal, name: string) {
  const now = deps.now();
  const workspaceId = newId("ws");
  const operatorId = newId("op");
  const actor = { type: "operator" as const, id: admin.operatorId, label: admin.email };
  // In the new workspace the creator is its new admin: no id of the other workspace appears there.
  const actorThere = { ...actor, id: operatorId };
  const signingKey = await deps.receipts.prepareKey(workspaceId, now);
  await deps.prisma.$transaction(async (tx) => {
    const creator = await tx.operator.findUniqueOrThrow({ where: { id: admin.operatorId }, select: { accountId: true, name: true } });
    await tx.workspace.create({ data: { id: workspaceId, name, createdAt: now } });
    await tx.signingKey.create({ data: signingKey.row });
    await tx.operator.create({
      data: { id: operatorId, workspaceId, accountId: creator.accountId, email: admin.email, name: creator.name, role: "ADMIN", createdAt: now },
    });
    await deps.audit.append(tx, workspaceId, { actor: actorThere, action: "workspace.created", subjectType: "workspace", subjectId: workspaceId, data: { name } }, now);
    await deps.audit.append(tx, workspaceId, { actor: actorThere, action: "operator.created", subjectType: "operator", subjectId: operatorId, data: { email: admin.email, role: "ADMIN", existingAccount: true } }, now);
    await deps.audit.append(tx, admin.workspaceId, { actor, action: "workspace.created", subjectType: "workspace", subjectId: workspaceId, data: { name } }, now);
  });
  deps.receipts.adopt(signingKey);
  return { id: workspaceId, name, role: "ADMIN" as const };
}
