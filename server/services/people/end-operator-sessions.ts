// Ends every browser session and token of an operator (disabled, or given a
// new password), inside the caller's transaction; after the commit, the
// returned ids are announced so every node closes the sockets opened with them.
import type { ServiceDeps, Tx } from "../deps.ts";

export async function endOperatorSessions(tx: Tx, operatorId: string, now: Date): Promise<string[]> {
  const open = await tx.operatorSession.findMany({ where: { operatorId, revokedAt: null, expiresAt: { gt: now } }, select: { id: true } });
  await tx.operatorSession.updateMany({ where: { id: { in: open.map((session) => session.id) } }, data: { revokedAt: now } });
  return open.map((session) => session.id);
}

export function announceEndedSessions(deps: ServiceDeps, workspaceId: string, sessionIds: string[]): void {
  for (const sessionId of sessionIds) deps.bus.publish("operator:session-ended", { workspaceId, sessionId });
}
