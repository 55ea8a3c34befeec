"use client";
// The agent's state as it was when it asked, one click from the review screen:
// every key with its owner, the keys changed since the task's previous ask
// marked, and those changes as a diff. What the agent believed (a ticket that
// says "drafts only") is read beside what it asks to run.
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { formatTime } from "@/lib/format";
import { useTRPC } from "@/lib/trpc";
import type { ApprovalItem } from "@/lib/types";
import { StateDiff } from "../session/state-diff";
import { ErrorNote, Loading } from "../ui";

const CHANGE_MARK = { added: "added", removed: "removed", changed: "changed" } as const;
const CHANGE_STYLE = { added: "bg-emerald-100 text-emerald-900", removed: "bg-red-100 text-red-900", changed: "bg-amber-100 text-amber-900" } as const;

function valueText(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > 400 ? `${text.slice(0, 399)}…` : text;
}

export function AgentStateAtAsk({ approval }: { approval: ApprovalItem }) {
  const trpc = useTRPC();
  const [open, setOpen] = useState(false);
  const query = useQuery(trpc.approval.agentState.queryOptions({ approvalId: approval.approvalId }));
  // The version before this ask, for the diff of what changed.
  const fromVersion = query.data?.change?.fromVersion ?? 0;
  const before = useQuery({
    ...trpc.state.get.queryOptions({ taskId: approval.taskId, version: fromVersion }),
    enabled: open && fromVersion > 0,
  });
  if (query.error) return <ErrorNote title="Could not load the agent's state" error={query.error} hint="The approval itself is shown in full below." />;
  const data = query.data;
  if (!data) return <Loading>Loading the agent's state…</Loading>;
  const { atAsk, change, previous } = data;
  const changed = new Map((change?.keys ?? []).map((key) => [key.key, key.change]));
  const keyCount = Object.keys(atAsk?.state ?? {}).length;
  const summary = !atAsk
    ? "The agent had saved no state when it asked"
    : `Agent's state when it asked: v${atAsk.version}, ${keyCount} ${keyCount === 1 ? "key" : "keys"}` +
      (previous ? (change ? `, ${change.keys.length} changed since its previous ask` : ", unchanged since its previous ask") : ", its first ask in this task");

  return (
    <section aria-label="Agent state at the ask" data-testid="agent-state" className="rounded border border-slate-200 bg-white">
      <button
        type="button"
        aria-expanded={open}
        onClick={() => setOpen((value) => !value)}
        disabled={!atAsk && !change}
        className="flex w-full items-center gap-2 px-3 py-2 text-left text-sm hover:bg-slate-50 disabled:cursor-default disabled:hover:bg-white"
      >
        <span aria-hidden="true" className="w-3 text-slate-500">{atAsk ? (open ? "▾" : "▸") : ""}</span>
        <span className="min-w-0 flex-1">{summary}</span>
        {change ? <span className="shrink-0 rounded bg-amber-100 px-1.5 text-[11px] font-semibold text-amber-900">changed</span> : null}
      </button>
      {open && atAsk ? (
        <div className="space-y-3 border-t border-slate-200 p-3">
          <p className="text-xs text-slate-600">
            Saved {formatTime(atAsk.savedAt)}
            {previous ? <> · previous ask: <span className="font-mono">{previous.tool}</span> at {formatTime(previous.askedAt)} on v{previous.version}</> : null}
            {data.newerVersions > 0 ? ` · ${data.newerVersions} newer ${data.newerVersions === 1 ? "version" : "versions"} saved since` : ""} ·{" "}
            <Link href={`/sessions/${approval.sessionId}?task=${approval.taskId}`} className="underline decoration-slate-300 hover:decoration-slate-900">
              all versions
            </Link>
          </p>
          <table className="w-full table-fixed text-left text-xs" aria-label="State keys at the ask">
            <thead className="text-slate-500">
              <tr>
                <th className="w-1/4 py-1 pr-2">Key</th>
                <th className="w-1/4 pr-2">Owner</th>
                <th>Value</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(atAsk.state ?? {}).map(([key, value]) => {
                const mark = changed.get(key);
                const owner = atAsk.owners[key];
                return (
                  <tr key={key} data-change={mark ?? "same"} className="border-t border-slate-100 align-top">
                    <th scope="row" className="py-1 pr-2 font-mono font-semibold [overflow-wrap:anywhere]">
                      {key}
                      {mark ? <span className={`ml-1 rounded px-1 text-[10px] font-semibold ${CHANGE_STYLE[mark]}`}>{CHANGE_MARK[mark]}</span> : null}
                    </th>
                    <td className="py-1 pr-2 [overflow-wrap:anywhere]">
                      {owner ? owner.owner.toLowerCase() : "unowned"}
                      {owner?.protocol ? <span className="text-slate-500"> ({owner.protocol})</span> : null}
                    </td>
                    <td className="whitespace-pre-wrap py-1 font-mono [overflow-wrap:anywhere]">{valueText(value)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {change?.keys.some((key) => key.change === "removed") ? (
            <p className="text-xs text-red-800">Removed since the previous ask: {change.keys.filter((key) => key.change === "removed").map((key) => key.key).join(", ")}</p>
          ) : null}
          {change && (fromVersion === 0 || before.data?.state) ? (
            <StateDiff before={fromVersion === 0 ? {} : before.data!.state!} after={atAsk.state ?? {}} keys={change.keys.map((key) => key.key)} fromVersion={change.fromVersion} toVersion={change.toVersion} />
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
