// The workspaces the signed-in person belongs to, for the console's switcher.
// Only the person's own memberships: other workspaces stay invisible.
import type { OperatorPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps } from "../deps.ts";

export async function listMyWorkspaces(deps: ServiceDeps, principal: OperatorPrincipal) {
  const memberships = await deps.prisma.operator.findMany({
    where: { account: { memberships: { some: { id: principal.operatorId } } }, disabledAt: null },
    select: { role: true, workspace: { select: { id: true, name: true } } },
    orderBy: { createdAt: "asc" },
  });
  return memberships.map(({ role, workspace }) => ({ id: workspace.id, name: workspace.name, role, current: workspace.id === principal.workspaceId }));
}
