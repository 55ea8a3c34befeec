// The email that carries an invitation to a workspace: the same words whether
// or not the address has a Tollgate account, so it tells no one which exist.
import type { MailMessage } from "../net/mailer.ts";

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character]!);

export interface InvitationFacts {
  email: string;
  workspaceName: string;
  invitedBy: string;
  role: string;
  link: string;
  expiresAt: Date;
}

export function invitationMessage(facts: InvitationFacts): MailMessage {
  const expires = `${facts.expiresAt.toISOString().slice(0, 16).replace("T", " ")} UTC`;
  const lines = [
    `${facts.invitedBy} invites you to the workspace "${facts.workspaceName}" on Tollgate, as ${facts.role.toLowerCase()}.`,
    "",
    `Accept: ${facts.link}`,
    "",
    `Sign in with your Tollgate password if you have an account, or choose one. The link works once, until ${expires}.`,
    "If you did not expect this, ignore it: nothing changes unless you accept.",
  ];
  return {
    to: [facts.email],
    subject: `Invitation to ${facts.workspaceName} on Tollgate`,
    text: lines.join("\n"),
    html: [
      `<p>${escapeHtml(lines[0]!)}</p>`,
      `<p><a href="${escapeHtml(facts.link)}">Accept the invitation</a></p>`,
      `<p>${escapeHtml(lines[4]!)}<br>${escapeHtml(lines[5]!)}</p>`,
    ].join("\n"),
  };
}
