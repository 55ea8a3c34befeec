"use client";
// Small shared pieces of the console: status badges (text, never colour alone),
// JSON display, and the loading / empty / error states every page uses.
import type { ReactNode } from "react";

const STATUS_STYLES: Record<string, string> = {
  PENDING: "bg-amber-100 text-amber-900 ring-amber-300",
  APPROVED: "bg-emerald-100 text-emerald-900 ring-emerald-300",
  REJECTED: "bg-red-100 text-red-900 ring-red-300",
  ANSWERED: "bg-sky-100 text-sky-900 ring-sky-300",
  EXPIRED: "bg-orange-100 text-orange-900 ring-orange-300",
  CANCELED: "bg-slate-200 text-slate-700 ring-slate-300",
  RUNNING: "bg-sky-100 text-sky-900 ring-sky-300",
  PAUSED: "bg-amber-100 text-amber-900 ring-amber-400",
  COMPLETED: "bg-emerald-100 text-emerald-900 ring-emerald-300",
  FAILED: "bg-red-100 text-red-900 ring-red-300",
  OPEN: "bg-sky-100 text-sky-900 ring-sky-300",
  CLOSED: "bg-slate-200 text-slate-700 ring-slate-300",
};

export function StatusBadge({ status, label }: { status: string; label?: string }) {
  return (
    <span
      data-status={status}
      className={`inline-flex shrink-0 items-center rounded px-1.5 py-0.5 text-[11px] font-semibold uppercase tracking-wide ring-1 ring-inset ${STATUS_STYLES[status] ?? "bg-slate-100 text-slate-700 ring-slate-300"}`}
    >
      {label ?? status}
    </span>
  );
}

/**
 * An approval's badge. A respond decision is stored as REJECTED (the tool does
 * not run), but it is an answer, not a refusal, and is shown as its own outcome.
 */
export function ApprovalBadge({ approval }: { approval: { status: string; decision: { action: string } | null } }) {
  return approval.decision?.action === "respond" ? <StatusBadge status="ANSWERED" /> : <StatusBadge status={approval.status} />;
}

export const ACTION_LABEL: Record<string, string> = {
  approve: "Approved",
  edit: "Approved with edits",
  reject: "Rejected",
  respond: "Answered instead",
};

export function Loading({ children = "Loading…" }: { children?: ReactNode }) {
  return (
    <p className="text-sm text-slate-500" aria-busy="true">
      {children}
    </p>
  );
}

export function ErrorNote({ title, error, hint }: { title: string; error: unknown; hint?: string }) {
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div role="alert" className="rounded border border-red-200 bg-red-50 p-3 text-sm text-red-800">
      <p className="font-medium">{title}</p>
      <p className="mt-1">{message}</p>
      <p className="mt-1 text-red-700">{hint ?? "Check that the server is running; this retries on its own when live updates reconnect."}</p>
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="rounded border border-dashed border-slate-300 p-6 text-center text-sm text-slate-500">{children}</p>;
}

function colorize(json: string): ReactNode[] {
  const out: ReactNode[] = [];
  const token = /("(?:\\.|[^"\\])*")(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;
  let last = 0;
  let match: RegExpExecArray | null;
  let index = 0;
  while ((match = token.exec(json))) {
    if (match.index > last) out.push(json.slice(last, match.index));
    if (match[1] && match[2]) {
      out.push(
        <span key={index++} className="text-slate-500">
          {match[1]}
        </span>,
        match[2],
      );
    } else if (match[1]) {
      out.push(
        <span key={index++} className="text-emerald-800">
          {match[1]}
        </span>,
      );
    } else if (match[3]) {
      out.push(
        <span key={index++} className="text-violet-700">
          {match[3]}
        </span>,
      );
    } else {
      out.push(
        <span key={index++} className="text-sky-800">
          {match[4]}
        </span>,
      );
    }
    last = token.lastIndex;
  }
  if (last < json.length) out.push(json.slice(last));
  return out;
}

export function prettyJson(value: unknown): string {
  if (value === undefined) return "undefined";
  return JSON.stringify(value, null, 2);
}

/** Pretty JSON with light syntax colouring; large values are shown uncoloured. */
export function JsonView({ value, label, className = "" }: { value: unknown; label: string; className?: string }) {
  const text = prettyJson(value);
  return (
    <pre
      aria-label={label}
      tabIndex={0}
      className={`overflow-auto rounded border border-slate-200 bg-slate-50 p-3 font-mono text-xs leading-5 text-slate-900 ${className}`}
    >
      {text.length > 50_000 ? text : colorize(text)}
    </pre>
  );
}

/** One line of compact JSON, cut to `max` characters, for tables. */
export function compactJson(value: unknown, max = 120): string {
  if (value === null || value === undefined) return "";
  const text = JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
