"use client";
// What happened to the operator's decisions, on every page and every width: each
// waits a few seconds with Undo (and Send now), then says it was sent, that it
// counted toward a quorum, that someone else decided first, or why it was
// refused. A decision the network refused stays here until it is sent.
import { useQueries, useQueryClient } from "@tanstack/react-query";
import { useEffect, useSyncExternalStore } from "react";
import { decisionOutbox, type OutboxEntry } from "@/lib/decision-outbox";
import { formatTime, useNow } from "@/lib/format";
import { useTRPC } from "@/lib/trpc";
import { clearDrafts } from "./inbox/drafts";
import { useArming } from "./inbox/use-arming";
import { useConnectionState } from "./live-updates";

const NONE: readonly OutboxEntry[] = [];

export function useOutbox(): readonly OutboxEntry[] {
  const outbox = decisionOutbox();
  return useSyncExternalStore(
    (listener) => outbox.subscribe(listener),
    () => outbox.list(),
    () => NONE,
  );
}

/** The decision this page holds for an approval, if any. */
export function useOutboxEntry(approvalId: string): OutboxEntry | undefined {
  return useOutbox().find((entry) => entry.approvalId === approvalId);
}

export const isWaiting = (entry: OutboxEntry | undefined) => entry?.state === "waiting" || entry?.state === "sending" || entry?.state === "unsent";

const DOING: Record<string, string> = { approve: "Approving", reject: "Rejecting", edit: "Approving with edits", respond: "Answering" };
const DONE: Record<string, string> = { approve: "Approved", reject: "Rejected", edit: "Approved with edits", respond: "Answered" };
const VERB: Record<string, string> = { approve: "approved", reject: "rejected", edit: "approved with edits", respond: "answered" };

/** The line a decision's notice starts with. */
export function describeEntry(entry: OutboxEntry, now: number): string {
  const { action } = entry.input;
  const what = `${entry.subject}`;
  switch (entry.state) {
    case "waiting":
      return `${DOING[action]} ${what}: sent in ${Math.max(1, Math.ceil((entry.dueAt - now) / 1000))} s`;
    case "sending":
      return `${DOING[action]} ${what}: sending…`;
    case "unsent":
      return `${DOING[action]} ${what}: not sent yet, the server cannot be reached. It is sent when the connection is back; keep this tab open.`;
    case "sent":
      return `${DONE[action]} ${what}.`;
    case "voted":
      return `Your approval of ${what} is recorded: ${entry.note}.`;
    case "late": {
      const late = entry.late!;
      return `Already ${late.action ? (VERB[late.action] ?? late.action) : "decided"} by ${late.decidedBy}${late.decidedAt ? ` at ${formatTime(late.decidedAt)}` : ""}: your decision on ${what} was not recorded.`;
    }
    case "failed":
      return `Not sent: ${entry.note}. Nothing was decided on ${what}.`;
    case "undone":
      return `Undone: ${what} was not ${VERB[action]}; it still waits.`;
  }
}

function DecisionToast({ entry }: { entry: OutboxEntry }) {
  const now = useNow();
  const outbox = decisionOutbox();
  // Undo appears where a second click may already be on its way: it arms like a decision does.
  const arming = useArming();
  const waiting = entry.state === "waiting" || entry.state === "unsent";
  const warn = entry.state === "unsent" || entry.state === "late" || entry.state === "failed";
  const tone = warn ? "border-amber-500 bg-amber-50 text-amber-950" : entry.state === "undone" ? "border-slate-300 bg-white text-slate-900" : "border-emerald-600 bg-emerald-50 text-emerald-950";
  const button = "rounded border px-2 py-0.5 text-xs font-medium aria-disabled:cursor-wait aria-disabled:opacity-60";
  return (
    <li
      role={warn ? "alert" : "status"}
      data-testid="decision-toast"
      data-approval-id={entry.approvalId}
      data-state={entry.state}
      className={`pointer-events-auto flex flex-wrap items-center gap-x-3 gap-y-1 rounded border-l-4 border px-3 py-2 text-sm shadow-md ${tone}`}
    >
      <p className="min-w-0 flex-1 break-words">
        {describeEntry(entry, now)}
      </p>
      <div className="flex shrink-0 items-center gap-2">
        {waiting ? (
          <>
            <button type="button" {...arming.press(() => outbox.undo(entry.approvalId))} className={`${button} border-slate-400 bg-white text-slate-900 hover:bg-slate-100`}>
              Undo
            </button>
            <button type="button" {...arming.press(() => outbox.sendNow(entry.approvalId))} className={`${button} border-transparent text-slate-700 underline`}>
              Send now
            </button>
          </>
        ) : entry.state !== "sending" ? (
          <button type="button" onClick={() => outbox.dismiss(entry.approvalId)} aria-label="Dismiss" className="px-1 text-slate-500 hover:text-slate-900">
            ×
          </button>
        ) : null}
      </div>
    </li>
  );
}

/**
 * The notices, clear of the decision bar: over the top of a phone's screen, over
 * the foot of the list beside it on wider ones. Plus what follows a decision's
 * outcome (drafts, refetches, retries).
 */
export function DecisionToasts() {
  const entries = useOutbox();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const connection = useConnectionState();
  const outbox = decisionOutbox();

  // Back online: what the network refused goes again.
  useEffect(() => {
    if (connection === "live") outbox.retryUnsent();
  }, [connection, outbox]);

  // A sent decision: its drafts are done with, and what shows it is read again.
  const settled = entries.filter((entry) => entry.state !== "waiting" && entry.state !== "sending" && entry.state !== "unsent" && entry.state !== "undone");
  const settledKey = settled.map((entry) => `${entry.approvalId}:${entry.state}`).join(",");
  useEffect(() => {
    if (!settledKey) return;
    for (const entry of settled) if (entry.state === "sent" || entry.state === "late") clearDrafts(entry.approvalId);
    for (const queryKey of [trpc.approval.pathKey(), trpc.request.pathKey(), trpc.task.pathKey()]) void queryClient.invalidateQueries({ queryKey });
    // eslint-disable-next-line react-hooks/exhaustive-deps -- settledKey names the entries that changed
  }, [settledKey]);

  // Someone else decided one that waits here: send it now, and the server's answer says who.
  const waiting = entries.filter((entry) => entry.state === "waiting");
  const current = useQueries({ queries: waiting.map((entry) => ({ ...trpc.approval.get.queryOptions({ approvalId: entry.approvalId }), staleTime: Infinity })) });
  useEffect(() => {
    current.forEach((query, index) => {
      const entry = waiting[index];
      if (entry && query.data && query.data.approvalId === entry.approvalId && query.data.status !== "PENDING") outbox.sendNow(entry.approvalId);
    });
  });

  if (entries.length === 0) return null;
  return (
    <ol aria-label="Your decisions" className="pointer-events-none fixed inset-x-2 top-2 z-50 space-y-2 md:bottom-12 md:left-4 md:right-auto md:top-auto md:w-[28rem]">
      {entries.map((entry) => (
        <DecisionToast key={`${entry.approvalId}:${entry.dueAt}`} entry={entry} />
      ))}
    </ol>
  );
}
