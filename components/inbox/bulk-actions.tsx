"use client";
// Deciding several pending approvals at once: confirmed first (how many, which
// tools), then reported approval by approval.
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage } from "@/lib/errors";
import { useTRPC, useTRPCClient } from "@/lib/trpc";
import type { ApprovalItem } from "@/lib/types";
import { useOperator } from "../app-shell";
import { bulkOutcomes, bulkSummary, type BulkAction, type BulkOutcome } from "./bulk-report";

/** "send_email ×2, refund": which tools a bulk decision covers. */
function toolCounts(items: readonly ApprovalItem[]): string {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(item.tool, (counts.get(item.tool) ?? 0) + 1);
  return [...counts].map(([tool, count]) => (count > 1 ? `${tool} ×${count}` : tool)).join(", ");
}

const OUTCOME_STYLE: Record<BulkOutcome["kind"], string> = {
  done: "text-emerald-800",
  voted: "text-sky-800",
  late: "text-amber-800",
  skipped: "text-slate-600",
  failed: "text-red-800",
};

interface BulkActionsProps {
  /** Checked approvals that are still pending. */
  selected: ApprovalItem[];
  shown: ApprovalItem[];
  onSelect(ids: Set<string>): void;
  onOpen(approvalId: string): void;
  onStatus(text: string): void;
}

export function BulkActions({ selected, shown, onSelect, onOpen, onStatus }: BulkActionsProps) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const queryClient = useQueryClient();
  const operator = useOperator();
  const [message, setMessage] = useState("");
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState<BulkAction | null>(null);
  const [report, setReport] = useState<{ action: BulkAction; outcomes: BulkOutcome[] } | null>(null);
  const allShownChecked = shown.length > 0 && selected.length === shown.length;

  async function decide(action: BulkAction) {
    const targets = selected;
    const allowed = targets.filter((item) => item.allow.includes(action));
    const text = message.trim();
    setBusy(true);
    let results: Awaited<ReturnType<typeof client.approval.decideMany.mutate>>["results"] = [];
    let failure: string | undefined;
    try {
      if (allowed.length) {
        ({ results } = await client.approval.decideMany.mutate({
          approvalIds: allowed.map((item) => item.approvalId),
          action,
          ...(action === "reject" && text ? { message: text } : {}),
        }));
      }
    } catch (error) {
      failure = errorMessage(error);
    } finally {
      setBusy(false);
    }
    const outcomes = bulkOutcomes(targets, action, results, operator.email, failure);
    setConfirming(null);
    setReport({ action, outcomes });
    onStatus(bulkSummary(outcomes, action));
    onSelect(new Set());
    setMessage("");
    void queryClient.invalidateQueries({ queryKey: trpc.approval.pathKey() });
  }

  return (
    <>
      <div aria-label="Bulk actions" role="group" className="flex h-11 shrink-0 items-center gap-2 border-b border-slate-200 bg-slate-50 px-3 text-sm">
        <input
          type="checkbox"
          aria-label="Select all shown approvals"
          checked={allShownChecked}
          disabled={shown.length === 0}
          onChange={() => onSelect(allShownChecked ? new Set() : new Set(shown.map((item) => item.approvalId)))}
          className="h-4 w-4"
        />
        {selected.length === 0 ? (
          <span className="truncate text-slate-500">Select approvals (x or the checkboxes) to decide several at once.</span>
        ) : (
          <>
            <span className="font-medium">{selected.length} selected</span>
            <button type="button" disabled={busy} onClick={() => setConfirming("approve")} className="rounded bg-emerald-700 px-2 py-1 font-medium text-white disabled:opacity-50">
              Approve {selected.length}
            </button>
            <input aria-label="Rejection message for the selected approvals" placeholder="Rejection message (optional)" value={message} onChange={(event) => setMessage(event.target.value)} className="min-w-0 flex-1 rounded border border-slate-300 px-2 py-1" />
            <button type="button" disabled={busy} onClick={() => setConfirming("reject")} className="rounded border border-red-300 bg-white px-2 py-1 font-medium text-red-800 disabled:opacity-50">
              Reject {selected.length}
            </button>
            <button type="button" onClick={() => onSelect(new Set())} className="rounded px-2 py-1 text-slate-600 hover:bg-slate-100">
              Clear selection
            </button>
          </>
        )}
      </div>

      {confirming && selected.length > 0 ? (
        <div role="alertdialog" aria-label="Confirm bulk decision" className="flex flex-wrap items-center gap-2 border-b border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950">
          <span className="min-w-0 flex-1">
            {confirming === "approve" ? "Approve" : "Reject"} {selected.length} approval{selected.length === 1 ? "" : "s"}: {toolCounts(selected)}?
          </span>
          <button
            type="button"
            disabled={busy}
            onClick={() => void decide(confirming)}
            className={`rounded px-2 py-1 font-medium disabled:opacity-50 ${confirming === "approve" ? "bg-emerald-700 text-white" : "border border-red-300 bg-white text-red-800"}`}
          >
            {busy ? "Deciding…" : `Yes, ${confirming} ${selected.length}`}
          </button>
          <button type="button" onClick={() => setConfirming(null)} className="rounded px-2 py-1 text-slate-700 hover:bg-amber-100">
            Back
          </button>
        </div>
      ) : null}

      {report ? (
        <section aria-label="Bulk decision results" className="max-h-48 shrink-0 overflow-auto border-b border-slate-200 bg-white px-3 py-2 text-sm">
          <div className="mb-1 flex items-center justify-between gap-2">
            <h2 className="font-medium">{bulkSummary(report.outcomes, report.action)}</h2>
            <button type="button" onClick={() => setReport(null)} className="shrink-0 rounded px-2 py-0.5 text-slate-600 hover:bg-slate-100">
              Dismiss
            </button>
          </div>
          <ul className="space-y-0.5">
            {report.outcomes.map((outcome) => (
              <li key={outcome.approvalId} data-outcome={outcome.kind} className="flex min-w-0 flex-wrap items-baseline gap-x-2">
                <button type="button" onClick={() => onOpen(outcome.approvalId)} className="min-w-0 truncate font-mono text-xs text-slate-900 underline decoration-slate-300">
                  {outcome.tool} · {outcome.agent}
                </button>
                <span className={`min-w-0 ${OUTCOME_STYLE[outcome.kind]}`}>{outcome.text}</span>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </>
  );
}
