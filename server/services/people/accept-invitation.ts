// auth.acceptInvitation: the person with an invitation's link joins the
// workspace, as the account their email already has (proved by its password)
// or as a new account with the password they choose, and is signed in there.
// The link works once and until it expires; a wrong password counts toward
// the login throttle like a failed login.
import { verify as argon2Verify } from "@node-rs/argon2";
import { DomainError } from "../../domain/errors.ts";
import { newId } from "../../domain/ids.ts";
import type { OperatorRoleName } from "../../domain/principal.ts";
import { hashPassword, issueOperatorSession, sha256, type LoginClient } from "../auth.ts";
import type { ServiceDeps } from "../deps.ts";
import { isUniqueViolation } from "../transaction.ts";

export const NEW_PASSWORD_MIN = 8;

const invalidLink = () => new DomainError("NOT_FOUND", "this invitation link is not valid: it was used or withdrawn, or it expired; ask for a new one");

/** What the accept page shows: the workspace and who is invited, never whether their account exists. */
export async function readInvitation(deps: ServiceDeps, token: string): Promise<{ workspaceName: string; email: string; name: string; role: OperatorRoleName; expiresAt: string }> {
  const invitation = await deps.prisma.invitation.findUnique({ where: { tokenHash: sha256(token) }, include: { workspace: { select: { name: true } } } });
  if (!invitation || invitation.acceptedAt || invitation.revokedAt || invitation.expiresAt <= deps.now()) throw invalidLink();
  return { workspaceName: invitation.workspace.name, email: invitation.email, name: invitation.name, role: invitation.role, expiresAt: invitation.expiresAt.toISOString() };
}

export interface AcceptedInvitation {
  operator: { id: string; email: string; name: string; role: OperatorRoleName };
  workspace: { id: string; name: string };
  token: string;
  expiresAt: Date;
  device: string;
}

export async function acceptInvitation(deps: ServiceDeps, input: { token: string; password: string }, client: LoginClient = {}): Promise<AcceptedInvitation> {
  const invitation = await deps.prisma.invitation.findUnique({ where: { tokenHash: sha256(input.token) }, include: { workspace: { select: { name: true } } } });
  if (!invitation || invitation.acceptedAt || invitation.revokedAt || invitation.expiresAt <= deps.now()) throw invalidLink();
  const { email } = invitation;
  const attempt = await deps.loginThrottle.reserve(email, client.address, client.device);
  const account = await deps.prisma.account.findUnique({ where: { email }, select: { id: true, passwordHash: true } });
  if (account && !(await argon2Verify(account.passwordHash, input.password))) {
    throw new DomainError("UNAUTHORIZED", `the password is not that of the Tollgate account of ${email}`, { field: "password" });
  }
  if (!account && input.password.length < NEW_PASSWORD_MIN) {
    throw new DomainError("BAD_INPUT", `password: must be at least ${NEW_PASSWORD_MIN} characters`, { field: "password" });
  }
  const passwordHash = account ? null : await hashPassword(input.password);
  const now = deps.now();
  const operatorId = newId("op");
  try {
    await deps.prisma.$transaction(async (tx) => {
      // Once: of two acceptances at the same moment, one takes it.
      const taken = await tx.invitation.updateMany({ where: { id: invitation.id, acceptedAt: null, revokedAt: null, expiresAt: { gt: now } }, data: { acceptedAt: now } });
      if (taken.count === 0) throw invalidLink();
      const accountId = account?.id ?? newId("acc");
      if (!account) await tx.account.create({ data: { id: accountId, email, passwordHash: passwordHash!, createdAt: now } });
      await tx.operator.create({ data: { id: operatorId, workspaceId: invitation.workspaceId, accountId, email, name: invitation.name, role: invitation.role, createdAt: now } });
      await deps.audit.append(
        tx,
        invitation.workspaceId,
        {
          actor: { type: "operator", id: operatorId, label: email },
          action: "operator.created",
          subjectType: "operator",
          subjectId: operatorId,
          data: { email, role: invitation.role, invitationId: invitation.id, invitedBy: invitation.invitedBy },
        },
        now,
      );
    });
  } catch (error) {
    // The same address joined meanwhile (another invitation), or the account was made at the same moment.
    if (isUniqueViolation(error)) throw new DomainError("CONFLICT", `${email} is already in this workspace, or was made an account at the same moment; sign in instead`);
    throw error;
  }
  const { device } = await attempt.succeeded();
  const issued = await issueOperatorSession(deps, operatorId, invitation.workspaceId, "BROWSER");
  return {
    operator: { id: operatorId, email, name: invitation.name, role: invitation.role },
    workspace: { id: invitation.workspaceId, name: invitation.workspace.name },
    ...issued,
    device,
  };
}
