// What an admin writes for a notification channel, checked before it is stored.
import { DomainError } from "../../domain/errors.ts";
import { checkUrlLiteral } from "../../domain/outbound.ts";
import type { ServiceDeps } from "../deps.ts";

export type ChannelKindName = "EMAIL" | "SLACK" | "WEBHOOK";

export interface ChannelInput {
  name: string;
  kind: ChannelKindName;
  /** EMAIL: fixed recipients; none: the operators each approval asks. */
  emails?: string[];
  /** SLACK and WEBHOOK: where to POST. */
  url?: string;
  digestThreshold?: number;
  digestWindowSeconds?: number;
  enabled?: boolean;
}

/** Throws BAD_INPUT (naming the field) or PRECONDITION_FAILED when the channel could never send. */
export function assertSendable(deps: ServiceDeps, kind: ChannelKindName, fields: { emails?: string[]; url?: string | null }): void {
  if (kind === "EMAIL") {
    if (!deps.mailer) {
      throw new DomainError("PRECONDITION_FAILED", "kind: an EMAIL channel needs the server's SMTP settings; set TOLLGATE_SMTP_URL (and TOLLGATE_SMTP_FROM) and restart");
    }
    if (fields.url) throw new DomainError("BAD_INPUT", "url: an EMAIL channel sends to emails, not to a URL", { field: "url" });
    return;
  }
  if (fields.emails?.length) throw new DomainError("BAD_INPUT", `emails: a ${kind} channel posts to its url; emails are for EMAIL channels`, { field: "emails" });
  if (!fields.url) throw new DomainError("BAD_INPUT", `url: a ${kind} channel needs the URL to POST to`, { field: "url" });
  // A literal private address is refused now; a name is checked on every address it resolves to when sent to.
  const verdict = checkUrlLiteral(fields.url, deps.outbound.allow);
  if (!verdict.allowed) throw new DomainError("BAD_INPUT", `url is refused: ${verdict.reason}`, { field: "url" });
}

export function urlOrigin(url: string): string {
  return new URL(url).origin;
}
