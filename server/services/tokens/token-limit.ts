// The workspace's cap on operator token lifetimes: read by anyone signed in,
// set by admins. Tokens minted before a lower cap keep their expiry (revoke
// them to end them sooner).
import type { OperatorPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps } from "../deps.ts";
import { actorOf } from "./token-rows.ts";

export async function tokenLimit(deps: ServiceDeps, workspaceId: string) {
  const workspace = await deps.prisma.workspace.findUniqueOrThrow({ where: { id: workspaceId }, select: { maxTokenHours: true } });
  return { maxTokenHours: workspace.maxTokenHours };
}

export async function setTokenLimit(deps: ServiceDeps, admin: OperatorPrincipal, maxTokenHours: number) {
  const now = deps.now();
  await deps.prisma.$transaction(async (tx) => {
    const before = await tx.workspace.findUniqueOrThrow({ where: { id: admin.workspaceId }, select: { maxTokenHours: true } });
    await tx.workspace.update({ where: { id: admin.workspaceId }, data: { maxTokenHours } });
    await deps.audit.append(
      tx,
      admin.workspaceId,
      { actor: actorOf(admin), action: "workspace.token_limit_changed", subjectType: "workspace", subjectId: admin.workspaceId, data: { from: before.maxTokenHours, to: maxTokenHours } },
      now,
    );
  });
  return { maxTokenHours };
}
