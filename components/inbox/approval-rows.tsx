"use client";
// Rows of the inbox lists: fixed height (the list is virtualized and must not
// shift), every fact in words, pending rows ticking their waited and expiry times.
import { memo } from "react";
import { formatDuration, formatTime, useNow } from "@/lib/format";
import type { ApprovalItem } from "@/lib/types";
import { keyArguments } from "@/server/domain/notification-message";
import { ACTION_LABEL, ApprovalBadge } from "../ui";
import { RiskChip } from "./risk-flags";

export const ROW_HEIGHT = 64;

/** What is asked, in one line: the first arguments, each cut short. */
function argsPreview(args: unknown): string {
  return keyArguments(args)
    .map(([key, value]) => `${key}: ${value.length > 40 ? `${value.slice(0, 39)}…` : value}`)
    .join(" · ");
}

interface RowProps {
  approval: ApprovalItem;
  sessionLabel: string;
  current: boolean;
  checked: boolean;
  checkable: boolean;
  gone?: boolean;
  queued?: boolean;
  onOpen(id: string): void;
  onToggle(id: string): void;
}

function PendingTimes({ approval }: { approval: ApprovalItem }) {
  const now = useNow();
  const waited = now - new Date(approval.createdAt).getTime();
  const left = approval.expiresAt ? new Date(approval.expiresAt).getTime() - now : null;
  return (
    <div className="w-28 shrink-0 text-right text-xs leading-5 sm:w-36">
      <div>
        <span className="text-slate-500">waited </span>
        <span className="font-medium tabular-nums">{formatDuration(waited)}</span>
      </div>
      <div className={left !== null && left < 60_000 ? "font-semibold text-red-700" : "text-slate-500"}>
        {left === null ? "no expiry" : left <= 0 ? "expiring now" : <>expires in <span className="tabular-nums">{formatDuration(left)}</span>{approval.onTimeout === "approve" ? " → auto-approve" : ""}</>}
      </div>
    </div>
  );
}

export const PendingRow = memo(function PendingRow({ approval, sessionLabel, current, checked, checkable, gone, queued, onOpen, onToggle }: RowProps) {
  const label = `${approval.tool} by ${approval.agent}`;
  return (
    <div
      data-approval-id={approval.approvalId}
      data-gone={gone || undefined}
      style={{ height: ROW_HEIGHT }}
      className={`flex items-center gap-3 border-b border-slate-200 px-3 ${current ? "bg-sky-50 ring-2 ring-inset ring-sky-500" : "bg-white hover:bg-slate-50"} ${gone ? "opacity-50" : ""}`}
    >
      {checkable ? (
        <input type="checkbox" checked={checked} onChange={() => onToggle(approval.approvalId)} aria-label={`Select ${label}`} className="h-4 w-4 shrink-0" />
      ) : null}
      <button type="button" onClick={() => onOpen(approval.approvalId)} aria-current={current ? "true" : undefined} aria-label={`Open ${label}`} className="flex min-w-0 flex-1 items-center gap-3 text-left">
        <ToolAndAgent approval={approval} sessionLabel={sessionLabel} tag={gone ? "no longer waiting" : queued ? "your decision is on its way" : undefined} />
        <PendingTimes approval={approval} />
      </button>
    </div>
  );
});

/** The two lines every row starts with: which tool, asked by which agent, in which session. */
function ToolAndAgent({ approval, sessionLabel, tag }: { approval: RowProps["approval"]; sessionLabel: string; tag?: string }) {
  return (
    <div className="min-w-0 flex-1">
      <div className="flex min-w-0 items-center gap-2">
        {approval.kind !== "tool" ? (
          <span className="shrink-0 rounded bg-indigo-100 px-1.5 text-[11px] font-semibold uppercase text-indigo-900">{approval.kind}</span>
        ) : null}
        <span className="truncate font-mono text-sm font-semibold">{approval.tool}</span>
        <RiskChip risk={approval.risk} />
        {approval.agentWaiting === "gone" ? (
          <span data-testid="agent-gone-tag" title="No agent has asked about this approval lately: a decision would be recorded, but nothing may run" className="shrink-0 rounded bg-amber-100 px-1.5 text-[11px] font-medium text-amber-900">
            no agent waiting
          </span>
        ) : null}
        {approval.agentWaiting === "parked" ? (
          <span data-testid="run-parked-tag" title="No process waits now; the durable run continues with the decision when its agent starts again" className="shrink-0 rounded bg-sky-100 px-1.5 text-[11px] font-medium text-sky-900">
            parked
          </span>
        ) : null}
        {tag ? (
          <span data-testid="row-state" className="shrink-0 rounded bg-slate-200 px-1.5 text-[11px] font-medium text-slate-800">
            {tag}
          </span>
        ) : null}
        {approval.askedOfYou && approval.status === "PENDING" ? (
          <span data-testid="asked-of-you" className="shrink-0 rounded bg-sky-100 px-1.5 text-[11px] font-medium text-sky-900">
            asked of you
          </span>
        ) : null}
      </div>
      <div className="truncate text-xs text-slate-600">
        <span className="font-medium text-slate-800">{approval.agent}</span> · {sessionLabel || approval.sessionTitle || "Untitled session"}
      </div>
      <div className="truncate font-mono text-[11px] text-slate-500" data-testid="args-preview">
        {argsPreview(approval.args)}
      </div>
    </div>
  );
}

export const HistoryRow = memo(function HistoryRow({ approval, sessionLabel, current, onOpen }: RowProps) {
  const decision = approval.decision;
  return (
    <div
      data-approval-id={approval.approvalId}
      style={{ height: ROW_HEIGHT }}
      className={`flex items-center gap-3 border-b border-slate-200 px-3 ${current ? "bg-sky-50 ring-2 ring-inset ring-sky-500" : "bg-white hover:bg-slate-50"}`}
    >
      <button type="button" onClick={() => onOpen(approval.approvalId)} aria-current={current ? "true" : undefined} aria-label={`Open ${approval.tool} by ${approval.agent}`} className="flex min-w-0 flex-1 items-center gap-3 text-left">
        <div className="w-24 shrink-0">
          <ApprovalBadge approval={approval} />
        </div>
        <ToolAndAgent approval={approval} sessionLabel={sessionLabel} />
        {approval.executionDeviated ? (
          <span data-testid="deviation-tag" className="shrink-0 rounded bg-red-600 px-1.5 py-0.5 text-[11px] font-semibold text-white">
            ran other args
          </span>
        ) : null}
        <div className="hidden w-56 shrink-0 text-right text-xs leading-5 sm:block">
          <div className="truncate">
            {decision ? ACTION_LABEL[decision.action] : approval.status.toLowerCase()} by <span className="font-medium">{decision?.decidedBy ?? approval.cancellation?.by ?? "—"}</span>
          </div>
          <div className="text-slate-500 tabular-nums">{formatTime(decision?.decidedAt ?? approval.cancellation?.at)}</div>
        </div>
      </button>
    </div>
  );
});
