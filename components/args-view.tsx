"use client";
// Proposed arguments as the operator reads them: the agent's keys in the order
// sent; long text (a SQL statement, an email body) as text with its line
// breaks, at any depth, its first lines always shown and the rest folded behind
// a control; nested objects and arrays as a tree that folds; and the values the
// risk flags point at marked where they are, the flagged words within them.
import { useState, type ReactNode } from "react";
import { pathOf } from "@/server/domain/risk";
import type { PathSegment } from "@/server/domain/json-path";

/** Text longer than this is folded to its first lines. */
const FOLD_LINES = 12;
const FOLD_CHARS = 1200;
const SHOWN_LINES = 8;
const SHOWN_CHARS = 700;

/** What a risk flag says about one argument: its label, and the words that raised it. */
export interface ArgRisk {
  path: string;
  label: string;
  match?: string;
}

function isLongText(value: unknown): value is string {
  return typeof value === "string" && (value.includes("\n") || value.length > 120);
}

/** `text` with each of `words` marked. */
function marked(text: string, words: readonly string[]): ReactNode {
  const found = words.filter(Boolean).sort((a, b) => b.length - a.length);
  if (found.length === 0) return text;
  const parts: ReactNode[] = [];
  let rest = text;
  let key = 0;
  for (;;) {
    let at = -1;
    let word = "";
    for (const each of found) {
      const index = rest.indexOf(each);
      if (index !== -1 && (at === -1 || index < at)) [at, word] = [index, each];
    }
    if (at === -1) break;
    parts.push(rest.slice(0, at));
    parts.push(
      <mark key={key++} data-testid="risk-match-inline" className="rounded-sm bg-red-200 px-0.5 font-semibold text-red-950">
        {word}
      </mark>,
    );
    rest = rest.slice(at + word.length);
  }
  parts.push(rest);
  return parts;
}

/** A long string as text: its line breaks kept, folded past a sensible length. */
export function LongText({ text, name, risks = [] }: { text: string; name: string; risks?: readonly ArgRisk[] }) {
  const lines = text.split("\n");
  const foldable = lines.length > FOLD_LINES || text.length > FOLD_CHARS;
  const [open, setOpen] = useState(false);
  let shown = text;
  if (foldable && !open) {
    shown = lines.slice(0, SHOWN_LINES).join("\n");
    if (shown.length > SHOWN_CHARS) shown = shown.slice(0, SHOWN_CHARS);
  }
  const hidden = foldable && !open ? text.length - shown.length : 0;
  const words = risks.flatMap((risk) => (risk.match ? [risk.match] : []));
  // A flagged word only in the folded part: say so on the fold control.
  const hiddenMatch = hidden > 0 && words.some((word) => !shown.includes(word) && text.includes(word));
  return (
    <div data-testid={`long-text-${name}`} data-risky={risks.length ? true : undefined} className={`min-w-0 rounded border bg-white ${risks.length ? "border-red-400 ring-1 ring-red-300" : "border-slate-200"}`}>
      <pre className="overflow-x-auto whitespace-pre-wrap break-words px-2 py-1.5 font-mono text-xs leading-5 text-slate-900">
        {marked(shown, words)}
        {hidden > 0 ? <span className="text-slate-400">…</span> : null}
      </pre>
      {foldable ? (
        <button
          type="button"
          aria-expanded={open}
          onClick={() => setOpen(!open)}
          className={`w-full border-t px-2 py-1 text-left font-sans text-xs font-medium hover:bg-slate-100 ${hiddenMatch ? "border-red-200 bg-red-50 text-red-900" : "border-slate-200 bg-slate-50 text-slate-700"}`}
        >
          {open ? "Fold" : `Show all ${lines.length} lines (${text.length.toLocaleString("en")} characters)${hiddenMatch ? ": flagged words in the folded part" : ""}`}
        </button>
      ) : null}
    </div>
  );
}

function RiskLabels({ risks, className = "" }: { risks: readonly ArgRisk[]; className?: string }) {
  const labels = [...new Set(risks.map((risk) => risk.label))];
  return (
    <span className={`flex flex-wrap gap-1 font-sans ${className}`}>
      {labels.map((label) => (
        <span key={label} data-testid="risk-label-inline" className="rounded bg-red-700 px-1.5 text-[11px] font-semibold text-white">
          {label}
        </span>
      ))}
    </span>
  );
}

function Scalar({ value }: { value: unknown }) {
  if (typeof value === "string") return <span className="break-all text-emerald-800">{JSON.stringify(value)}</span>;
  if (typeof value === "number") return <span className="text-sky-800">{value}</span>;
  return <span className="text-violet-800">{JSON.stringify(value)}</span>;
}

const MAX_DEPTH = 64;

/** One value at its path: text, a scalar, or an object or array whose entries follow, foldable. */
function ArgValue({ value, segments, risksAt }: { value: unknown; segments: PathSegment[]; risksAt(path: string): ArgRisk[] }) {
  const path = pathOf(segments);
  const risks = risksAt(path);
  const name = segments.map(String).join(".") || "value";
  if (isLongText(value)) return <LongText text={value} name={name} risks={risks} />;
  if (value === null || typeof value !== "object" || segments.length >= MAX_DEPTH) {
    const shown = typeof value === "object" && value !== null ? <span className="break-all">{JSON.stringify(value)}</span> : <Scalar value={value} />;
    if (!risks.length) return shown;
    return (
      <mark data-testid="risk-value-inline" data-path={path} className="inline-flex min-w-0 flex-wrap items-center gap-1 rounded bg-red-100 px-1 ring-1 ring-red-400">
        {shown}
        <RiskLabels risks={risks} />
      </mark>
    );
  }
  return <Entries value={value} segments={segments} risks={risks} risksAt={risksAt} />;
}

function Entries({ value, segments, risks, risksAt }: { value: object; segments: PathSegment[]; risks: ArgRisk[]; risksAt(path: string): ArgRisk[] }) {
  const [open, setOpen] = useState(true);
  const isArray = Array.isArray(value);
  const entries: [PathSegment, unknown][] = isArray ? value.map((item, index) => [index, item]) : Object.entries(value);
  const [opening, closing] = isArray ? ["[", "]"] : ["{", "}"];
  if (entries.length === 0) return <span className="text-slate-500">{opening + closing}</span>;
  return (
    <span className={`inline-block min-w-0 max-w-full align-top ${risks.length ? "rounded ring-1 ring-red-400" : ""}`}>
      <button type="button" aria-expanded={open} onClick={() => setOpen(!open)} className="rounded px-0.5 text-slate-500 hover:bg-slate-200" aria-label={`${open ? "Fold" : "Unfold"} ${pathOf(segments)}`}>
        {open ? "▾" : "▸"} {opening}
        {open ? "" : ` ${entries.length} ${entries.length === 1 ? "entry" : "entries"} ${closing}`}
      </button>
      {open ? (
        <>
          <div className="ml-3 space-y-0.5 border-l border-slate-200 pl-2">
            {entries.map(([key, item]) => (
              <Entry key={String(key)} name={key} value={item} segments={[...segments, key]} risksAt={risksAt} />
            ))}
          </div>
          <span className="text-slate-500">{closing}</span>
        </>
      ) : null}
    </span>
  );
}

function Entry({ name, value, segments, risksAt }: { name: PathSegment; value: unknown; segments: PathSegment[]; risksAt(path: string): ArgRisk[] }) {
  const block = isLongText(value) || (value !== null && typeof value === "object");
  // A block's flags go on its key's line, which is there anyway: the text below starts where it would.
  const risks = block ? risksAt(pathOf(segments)) : [];
  return (
    <div className={block ? "min-w-0 space-y-1" : "flex min-w-0 flex-wrap items-baseline gap-x-2"}>
      <span className="flex min-w-0 flex-wrap items-baseline gap-x-2">
        <span className={typeof name === "number" ? "text-slate-500" : "font-semibold text-slate-900"}>{typeof name === "number" ? `${name}:` : `${JSON.stringify(name)}:`}</span>
        {risks.length ? <RiskLabels risks={risks} /> : null}
      </span>
      <ArgValue value={value} segments={segments} risksAt={risksAt} />
    </div>
  );
}

export function ArgsView({ value, label, risks = [] }: { value: unknown; label: string; risks?: readonly ArgRisk[] }) {
  const risksAt = (path: string) => risks.filter((risk) => risk.path === path);
  const top = value !== null && typeof value === "object" && !Array.isArray(value) ? Object.entries(value as Record<string, unknown>) : null;
  return (
    <div role="group" aria-label={label} className="space-y-1.5 rounded border border-slate-200 bg-slate-50 p-3 font-mono text-xs leading-5">
      {top === null ? <ArgValue value={value} segments={[]} risksAt={risksAt} /> : null}
      {top?.length === 0 ? <span className="text-slate-500">{"{}"}</span> : null}
      {top?.map(([key, item]) => <Entry key={key} name={key} value={item} segments={[key]} risksAt={risksAt} />)}
    </div>
  );
}
