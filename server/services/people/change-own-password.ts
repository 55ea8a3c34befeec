// A person changes their own password, which opens every workspace they belong
// to: the current one is checked first (counted by the login throttle), and
// every other session and token of the account ends, in all its workspaces.
import { verify as argon2Verify } from "@node-rs/argon2";
import { DomainError } from "../../domain/errors.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import { hashPassword } from "../auth.ts";
import type { ServiceDeps } from "../deps.ts";
import { announceEndedSessions } from "./end-operator-sessions.ts";

export async function changeOwnPassword(
  deps: ServiceDeps,
  principal: OperatorPrincipal,
  input: { currentPassword: string; newPassword: string },
  client: { address?: string } = {},
) {
  const attempt = await deps.loginThrottle.reserve(principal.email, client.address);
  const { account } = await deps.prisma.operator.findUniqueOrThrow({ where: { id: principal.operatorId }, select: { account: true } });
  if (!(await argon2Verify(account.passwordHash, input.currentPassword))) {
    throw new DomainError("FORBIDDEN", "the current password is wrong", { field: "currentPassword" });
  }
  await attempt.succeeded();
  const passwordHash = await hashPassword(input.newPassword);
  const now = deps.now();
  const ended = await deps.prisma.$transaction(async (tx) => {
    await tx.account.update({ where: { id: account.id }, data: { passwordHash } });
    const open = await tx.operatorSession.findMany({
      where: { operator: { accountId: account.id }, id: { not: principal.sessionId }, revokedAt: null, expiresAt: { gt: now } },
      select: { id: true, workspaceId: true },
    });
    await tx.operatorSession.updateMany({ where: { id: { in: open.map((session) => session.id) } }, data: { revokedAt: now } });
    await deps.audit.append(
      tx,
      principal.workspaceId,
      { actor: { type: "operator", id: principal.operatorId, label: principal.email }, action: "operator.password_changed", subjectType: "operator", subjectId: principal.operatorId, data: { sessionsEnded: open.length } },
      now,
    );
    return open;
  });
  for (const session of ended) announceEndedSessions(deps, session.workspaceId, [session.id]);
  return { sessionsEnded: ended.length };
}
