"use client";
// What the reviewer must look at before deciding: the rule's risk label, the
// values it and the known patterns point at (highlighted where in the text
// they were found), and the tool's destructive hint. Nothing flagged is said
// as exactly that, never as "safe".
import type { ApprovalItem } from "@/lib/types";

type Flag = ApprovalItem["risk"]["flags"][number];

const TONE: Record<Flag["kind"], string> = {
  rule: "bg-rose-700 text-white",
  "destructive-hint": "bg-amber-200 text-amber-950",
  "dry-run-off": "bg-red-700 text-white",
  "sql-delete": "bg-red-100 text-red-900 ring-1 ring-inset ring-red-300",
  "sql-drop": "bg-red-700 text-white",
  "sql-truncate": "bg-red-700 text-white",
  "sql-no-where": "bg-red-700 text-white",
};

/** The excerpt with the text that raised the flag marked. */
function Excerpt({ flag }: { flag: Flag }) {
  const text = flag.excerpt ?? "";
  const at = flag.match ? text.indexOf(flag.match) : -1;
  const marked =
    at === -1 ? (
      <mark data-testid="risk-match" className="rounded-sm bg-red-200 px-0.5 text-red-950">
        {text}
      </mark>
    ) : (
      <>
        {text.slice(0, at)}
        <mark data-testid="risk-match" className="rounded-sm bg-red-200 px-0.5 font-semibold text-red-950">
          {flag.match}
        </mark>
        {text.slice(at + flag.match!.length)}
      </>
    );
  return (
    <span data-testid="risk-value" className="block min-w-0 whitespace-pre-wrap break-words font-mono text-xs text-slate-800">
      {marked}
    </span>
  );
}

export function RiskFlags({ approval }: { approval: ApprovalItem }) {
  const { flags } = approval.risk;
  if (flags.length === 0) {
    return (
      <p data-testid="risk-none" className="rounded border border-slate-200 bg-white px-3 py-2 text-xs text-slate-600">
        <span className="font-medium text-slate-800">Nothing flagged.</span> Flags come from the rules' risk labels and a few known patterns
        (dryRun false, SQL DELETE, DROP or TRUNCATE, UPDATE or DELETE without WHERE, a destructive tool hint); they do not say a call is safe.
      </p>
    );
  }
  return (
    <section aria-labelledby="risk-heading" data-testid="risk-flags" className="rounded border-2 border-red-300 bg-red-50/60 p-3">
      <h3 id="risk-heading" className="text-xs font-semibold uppercase tracking-wide text-red-900">
        Look before deciding: {flags.length} {flags.length === 1 ? "flag" : "flags"}
      </h3>
      <ul className="mt-2 space-y-2">
        {flags.map((flag, index) => (
          <li key={index} data-testid="risk-flag" data-kind={flag.kind} className="grid min-w-0 gap-1 text-sm sm:grid-cols-[minmax(0,14rem)_minmax(0,1fr)] sm:gap-3">
            <span className="min-w-0">
              <span className={`inline-block rounded px-1.5 py-0.5 text-xs font-semibold ${TONE[flag.kind]}`}>{flag.label}</span>
              {flag.kind === "rule" ? <span className="mt-0.5 block truncate text-[11px] text-slate-600">by the rule “{approval.policy?.name}”</span> : null}
            </span>
            {flag.path ? (
              <span className="min-w-0">
                <span className="font-mono text-[11px] text-slate-500">{flag.path}</span>
                <Excerpt flag={flag} />
              </span>
            ) : (
              <span className="text-xs text-slate-600">{flag.kind === "destructive-hint" ? `the tool${approval.annotations?.title ? ` “${approval.annotations.title}”` : ""}, as the agent declared it` : "the whole call"}</span>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The inbox row's label: the rule's, else the first flag's, with how many more. */
export function RiskChip({ risk }: { risk: ApprovalItem["risk"] }) {
  const first = risk.label ?? risk.flags.find((flag) => flag.kind !== "rule")?.label ?? risk.flags[0]?.label;
  if (!first) return null;
  const more = risk.flags.length - 1;
  return (
    <span data-testid="risk-chip" title={risk.flags.map((flag) => flag.label).join("\n")} className="min-w-0 shrink truncate rounded bg-red-700 px-1.5 text-[11px] font-semibold text-white">
      {first}
      {more > 0 ? ` +${more}` : ""}
    </span>
  );
}
