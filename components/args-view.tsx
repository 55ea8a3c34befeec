"use client";
// Proposed arguments as the operator reads them: the agent's keys in the order
// sent, long text (a SQL statement, an email body) as text with its line breaks,
// its first lines always shown and the rest folded behind a control, and nested
// values as a collapsible tree.
import { useState } from "react";
import { JsonTree } from "./json-tree";

/** Text longer than this is folded to its first lines. */
const FOLD_LINES = 12;
const FOLD_CHARS = 1200;
const SHOWN_LINES = 8;
const SHOWN_CHARS = 700;

function isLongText(value: unknown): value is string {
  return typeof value === "string" && (value.includes("\n") || value.length > 120);
}

/** A long string as text: its line breaks kept, folded past a sensible length. */
export function LongText({ text, name }: { text: string; name: string }) {
  const lines = text.split("\n");
  const foldable = lines.length > FOLD_LINES || text.length > FOLD_CHARS;
  const [open, setOpen] = useState(false);
  let shown = text;
  if (foldable && !open) {
    shown = lines.slice(0, SHOWN_LINES).join("\n");
    if (shown.length > SHOWN_CHARS) shown = shown.slice(0, SHOWN_CHARS);
  }
  const hidden = foldable && !open ? text.length - shown.length : 0;
  return (
    <div data-testid={`long-text-${name}`} className="min-w-0 rounded border border-slate-200 bg-white">
      <pre className="overflow-x-auto whitespace-pre-wrap break-words px-2 py-1.5 font-mono text-xs leading-5 text-slate-900">
        {shown}
        {hidden > 0 ? <span className="text-slate-400">…</span> : null}
      </pre>
      {foldable ? (
        <button
          type="button"
          aria-expanded={open}
          onClick={() => setOpen(!open)}
          className="w-full border-t border-slate-200 bg-slate-50 px-2 py-1 text-left font-sans text-xs font-medium text-slate-700 hover:bg-slate-100"
        >
          {open ? "Fold" : `Show all ${lines.length} lines (${text.length.toLocaleString("en")} characters)`}
        </button>
      ) : null}
    </div>
  );
}

function Scalar({ value }: { value: unknown }) {
  if (typeof value === "string") return <span className="break-all text-emerald-800">{JSON.stringify(value)}</span>;
  if (typeof value === "number") return <span className="text-sky-800">{value}</span>;
  return <span className="text-violet-800">{JSON.stringify(value)}</span>;
}

export function ArgsView({ value, label }: { value: unknown; label: string }) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return <JsonTree value={value} label={label} />;
  const entries = Object.entries(value as Record<string, unknown>);
  return (
    <div role="group" aria-label={label} className="space-y-1.5 rounded border border-slate-200 bg-slate-50 p-3 font-mono text-xs leading-5">
      {entries.length === 0 ? <span className="text-slate-500">{"{}"}</span> : null}
      {entries.map(([key, item]) => {
        const block = isLongText(item) || (item !== null && typeof item === "object");
        return (
          <div key={key} className={block ? "space-y-1" : "flex min-w-0 flex-wrap gap-x-2"}>
            <span className="font-semibold text-slate-900">{JSON.stringify(key)}:</span>
            {isLongText(item) ? (
              <LongText text={item} name={key} />
            ) : item !== null && typeof item === "object" ? (
              <JsonTree value={item} label={`${key} as JSON`} bare />
            ) : (
              <Scalar value={item} />
            )}
          </div>
        );
      })}
    </div>
  );
}
