// Revokes an operator token: its owner or an admin of the workspace may.
// Anyone else, or another workspace's token, gets NOT_FOUND (never a hint that
// it exists). Access ends at once: the next call is refused and sockets opened
// with it are closed on every node.
import { notFound } from "../../domain/errors.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps } from "../deps.ts";
import { actorOf, tokenView } from "./token-rows.ts";

export async function revokeToken(deps: ServiceDeps, principal: OperatorPrincipal, tokenId: string) {
  const now = deps.now();
  const select = { id: true, name: true, createdAt: true, expiresAt: true, revokedAt: true, operatorId: true, operator: { select: { email: true } } };
  const revoked = await deps.prisma.$transaction(async (tx) => {
    const token = await tx.operatorSession.findFirst({ where: { id: tokenId, workspaceId: principal.workspaceId, kind: "TOKEN" }, select });
    if (!token || (token.operatorId !== principal.operatorId && principal.role !== "ADMIN")) throw notFound("token", tokenId);
    if (token.revokedAt) return token;
    const updated = await tx.operatorSession.update({ where: { id: token.id }, data: { revokedAt: now }, select });
    await deps.audit.append(
      tx,
      principal.workspaceId,
      { actor: actorOf(principal), action: "operator.token_revoked", subjectType: "operator", subjectId: token.operatorId, data: { tokenId: token.id, name: token.name, owner: token.operator.email } },
      now,
    );
    return updated;
  });
  deps.bus.publish("operator:session-ended", { workspaceId: principal.workspaceId, sessionId: revoked.id });
  return tokenView(revoked);
}
