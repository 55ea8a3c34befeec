// Operator tokens: an operator's own, or, for an admin who asks, everyone's in
// the workspace. Newest first; never the token or its hash.
import type { OperatorPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps } from "../deps.ts";
import { tokenView } from "./token-rows.ts";

export async function listTokens(deps: ServiceDeps, principal: OperatorPrincipal, { everyone = false }: { everyone?: boolean } = {}) {
  const all = everyone && principal.role === "ADMIN";
  const rows = await deps.prisma.operatorSession.findMany({
    where: { workspaceId: principal.workspaceId, kind: "TOKEN", ...(all ? {} : { operatorId: principal.operatorId }) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: 500,
    select: { id: true, name: true, createdAt: true, expiresAt: true, revokedAt: true, operator: { select: { email: true } } },
  });
  return { items: rows.map(tokenView) };
}
