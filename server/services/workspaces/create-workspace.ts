// A new workspace, made by an admin who becomes its first admin. It starts
// empty: its own agent keys, policies, channels and people are added there.
// Both audit logs record it: the new workspace's, and the one it was made from.
import { newId } from "../../domain/ids.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps } from "../deps.ts";

export async function createWorkspace(deps: ServiceDeps, admin: OperatorPrincipal, name: string) {
  const now = deps.now();
  const workspaceId = newId("ws");
  const operatorId = newId("op");
  const actor = { type: "operator" as const, id: admin.operatorId, label: admin.email };
  await deps.prisma.$transaction(async (tx) => {
    const creator = await tx.operator.findUniqueOrThrow({ where: { id: admin.operatorId }, select: { accountId: true, name: true } });
    await tx.workspace.create({ data: { id: workspaceId, name, createdAt: now } });
    await tx.operator.create({
      data: { id: operatorId, workspaceId, accountId: creator.accountId, email: admin.email, name: creator.name, role: "ADMIN", createdAt: now },
    });
    await deps.audit.append(tx, workspaceId, { actor, action: "workspace.created", subjectType: "workspace", subjectId: workspaceId, data: { name, from: admin.workspaceId } }, now);
    await deps.audit.append(tx, workspaceId, { actor, action: "operator.created", subjectType: "operator", subjectId: operatorId, data: { email: admin.email, role: "ADMIN", existingAccount: true } }, now);
    await deps.audit.append(tx, admin.workspaceId, { actor, action: "workspace.created", subjectType: "workspace", subjectId: workspaceId, data: { name } }, now);
  });
  return { id: workspaceId, name, role: "ADMIN" as const };
}
