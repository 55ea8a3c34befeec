"use client";
// Who an approval asks, and every announcement of it: "emailed ops@… at 12:03, delivered".
import { useQuery } from "@tanstack/react-query";
import { formatTime } from "@/lib/format";
import { useTRPC } from "@/lib/trpc";
import type { ApprovalItem } from "@/lib/types";
import { ErrorNote } from "../ui";

const ORDINAL = ["", "once", "twice"];

/** "group finance, escalated once", "admins", "you, by name". */
export function describeAsked(asked: ApprovalItem["asked"], askedOfYou: boolean): string {
  const named = [...asked.operators, ...(asked.group ? [`group ${asked.group}`] : [])];
  const who = named.length ? named.join(", ") : asked.role === "ADMIN" ? "admins" : "operators and admins";
  const escalated = asked.escalationLevel ? `; escalated ${ORDINAL[asked.escalationLevel] ?? `${asked.escalationLevel} times`}` : "";
  return `${who}${askedOfYou ? " (you are asked)" : ""}${escalated}`;
}

const VERB: Record<string, string> = { EMAIL: "emailed", SLACK: "posted to", WEBHOOK: "posted to" };
const WHY: Record<string, string> = { REQUESTED: "new approval", ESCALATED: "escalation", EXPIRING: "about to expire" };

export function ApprovalNotifications({ approvalId }: { approvalId: string }) {
  const trpc = useTRPC();
  const sent = useQuery(trpc.notification.ofApproval.queryOptions({ approvalId }, { refetchInterval: 5_000 }));
  if (sent.error) return <ErrorNote title="Could not load the notifications" error={sent.error} />;
  const items = sent.data?.items ?? [];
  return (
    <section aria-labelledby="notifications-heading">
      <h3 id="notifications-heading" className="mb-1 text-xs font-semibold uppercase tracking-wide text-slate-500">
        Notifications
      </h3>
      {items.length === 0 ? (
        <p className="text-sm text-slate-500">{sent.isPending ? "Loading…" : "Nobody was notified outside the console."}</p>
      ) : (
        <ul className="space-y-1 text-sm" data-testid="notifications">
          {items.map((item) => {
            const where = item.kind === "EMAIL" ? item.recipients.join(", ") || item.channel : `${item.channel}${item.recipients[0] ? ` (${item.recipients[0]})` : ""}`;
            const state =
              item.status === "DELIVERED"
                ? `delivered at ${formatTime(item.deliveredAt)}${item.digestSize ? ` in a digest of ${item.digestSize}` : ""}`
                : item.status === "PENDING"
                  ? item.attempts
                    ? `retrying (attempt ${item.attempts}: ${item.lastError ?? "failed"})`
                    : "sending…"
                  : `not delivered: ${item.lastError ?? "failed"}`;
            return (
              <li key={item.notificationId} className="break-words">
                <span className="font-medium">{VERB[item.kind]}</span> {where} <span className="text-slate-500">({WHY[item.reason]})</span>:{" "}
                <span className={item.status === "FAILED" ? "text-red-700" : item.status === "DELIVERED" ? "text-emerald-800" : "text-slate-600"}>{state}</span>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
