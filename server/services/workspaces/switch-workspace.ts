// Moves a browser session to another workspace of the same person: a new
// session there replaces the current one (which ends, sockets included), so
// every call after the switch is scoped by the new workspace alone. Script
// tokens stay in the workspace they were minted for.
import { DomainError, notFound } from "../../domain/errors.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import { issueOperatorSession, logout } from "../auth.ts";
import type { ServiceDeps } from "../deps.ts";

export async function switchWorkspace(deps: ServiceDeps, principal: OperatorPrincipal, workspaceId: string) {
  const [session, target] = await Promise.all([
    deps.prisma.operatorSession.findUniqueOrThrow({ where: { id: principal.sessionId }, select: { kind: true } }),
    deps.prisma.operator.findFirst({
      where: { workspaceId, disabledAt: null, account: { memberships: { some: { id: principal.operatorId } } } },
      select: { id: true, email: true, name: true, role: true, workspace: { select: { name: true } } },
    }),
  ]);
  // Not a member (or disabled there) reads the same as a workspace that does not exist.
  if (!target) throw notFound("workspace", workspaceId);
  if (session.kind !== "BROWSER") {
    throw new DomainError("BAD_INPUT", "a token belongs to the workspace it was minted in; mint one in the other workspace instead");
  }
  const issued = await issueOperatorSession(deps, target.id, workspaceId, "BROWSER");
  await logout(deps, principal);
  return {
    ...issued,
    workspace: { id: workspaceId, name: target.workspace.name },
    operator: { id: target.id, email: target.email, name: target.name, role: target.role },
  };
}
