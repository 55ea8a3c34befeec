// operator.create: an admin invites a person to the workspace. Nothing is
// looked up about the address's account, so the answer (and the email) is the
// same whether or not one exists; the person joins only by accepting.
import { DomainError, notFound } from "../../domain/errors.ts";
import { newId } from "../../domain/ids.ts";
import { invitationMessage } from "../../domain/invitation-message.ts";
import type { OperatorPrincipal, OperatorRoleName } from "../../domain/principal.ts";
import { log } from "../../log.ts";
import { randomToken, sha256 } from "../auth.ts";
import type { ServiceDeps } from "../deps.ts";

export const INVITATION_DAYS = 7;

export interface InvitationView {
  invitationId: string;
  email: string;
  name: string;
  role: OperatorRoleName;
  createdAt: string;
  expiresAt: string;
}

export interface SentInvitation extends InvitationView {
  /** Emailed to the person through the server's SMTP. */
  emailed: boolean;
  /** The link to hand on, when it was not emailed; shown this once (only its hash is kept). */
  link: string | null;
  /** Why the email could not be sent, when it could not. */
  emailError: string | null;
}

const actorOf = (admin: OperatorPrincipal) => ({ type: "operator" as const, id: admin.operatorId, label: admin.email });

/** Where the person accepts: the token in the fragment, which browsers send to no server and no Referer carries. */
export const invitationLink = (publicUrl: string, token: string) => `${publicUrl.replace(/\/$/, "")}/invite#${token}`;

export async function invitePerson(deps: ServiceDeps, admin: OperatorPrincipal, input: { email: string; name: string; role: OperatorRoleName }): Promise<SentInvitation> {
  const email = input.email.toLowerCase();
  const now = deps.now();
  const expiresAt = new Date(now.getTime() + INVITATION_DAYS * 24 * 3600 * 1000);
  const token = randomToken("tgi");
  const invitationId = newId("inv");
  const workspaceName = await deps.prisma.$transaction(async (tx) => {
    // Membership of this workspace is the admin's to see (the People list); accounts elsewhere are not.
    if (await tx.operator.findFirst({ where: { workspaceId: admin.workspaceId, email }, select: { id: true } })) {
      throw new DomainError("CONFLICT", `${email} is already in this workspace`, { field: "email" });
    }
    // A new invitation replaces any pending one for the address: one link works at a time.
    await tx.invitation.updateMany({ where: { workspaceId: admin.workspaceId, email, acceptedAt: null, revokedAt: null }, data: { revokedAt: now } });
    await tx.invitation.create({
      data: { id: invitationId, workspaceId: admin.workspaceId, email, name: input.name, role: input.role, tokenHash: sha256(token), invitedBy: admin.operatorId, createdAt: now, expiresAt },
    });
    await deps.audit.append(tx, admin.workspaceId, { actor: actorOf(admin), action: "operator.invited", subjectType: "invitation", subjectId: invitationId, data: { email, role: input.role } }, now);
    return (await tx.workspace.findUniqueOrThrow({ where: { id: admin.workspaceId }, select: { name: true } })).name;
  });
  const view = { invitationId, email, name: input.name, role: input.role, createdAt: now.toISOString(), expiresAt: expiresAt.toISOString() };
  const link = invitationLink(deps.publicUrl(), token);
  if (!deps.mailer) return { ...view, emailed: false, link, emailError: null };
  try {
    await deps.mailer.send(invitationMessage({ email, workspaceName, invitedBy: admin.email, role: input.role, link, expiresAt }));
    return { ...view, emailed: true, link: null, emailError: null };
  } catch (error) {
    log.warn(`the invitation ${invitationId} could not be emailed: ${(error as Error).message}`);
    return { ...view, emailed: false, link, emailError: (error as Error).message };
  }
}

/** The workspace's invitations nobody has accepted yet, newest first (expired ones included, marked by their date). */
export async function listInvitations(deps: ServiceDeps, workspaceId: string): Promise<InvitationView[]> {
  const rows = await deps.prisma.invitation.findMany({ where: { workspaceId, acceptedAt: null, revokedAt: null }, orderBy: { createdAt: "desc" }, take: 200 });
  return rows.map((row) => ({ invitationId: row.id, email: row.email, name: row.name, role: row.role, createdAt: row.createdAt.toISOString(), expiresAt: row.expiresAt.toISOString() }));
}

export async function revokeInvitation(deps: ServiceDeps, admin: OperatorPrincipal, invitationId: string): Promise<{ invitationId: string }> {
  const now = deps.now();
  await deps.prisma.$transaction(async (tx) => {
    const revoked = await tx.invitation.updateMany({ where: { id: invitationId, workspaceId: admin.workspaceId, acceptedAt: null, revokedAt: null }, data: { revokedAt: now } });
    if (revoked.count === 0) throw notFound("invitation", invitationId);
    await deps.audit.append(tx, admin.workspaceId, { actor: actorOf(admin), action: "operator.invitation_revoked", subjectType: "invitation", subjectId: invitationId, data: {} }, now);
  });
  return { invitationId };
}
