"use client";
// The inbox's filter bar: session, agent, tool, free text (arguments, session
// titles, reasons), and the order of pending approvals.
import { sessionLabels } from "@/lib/session-labels";
import type { SessionItem } from "@/lib/types";
import { SORT_LABEL, type PendingSort } from "./pending-order";
import { NO_FILTERS, type InboxView } from "./use-inbox-view";

interface InboxFiltersProps {
  view: InboxView;
  onChange(change: Partial<InboxView>): void;
  sessions: SessionItem[];
  suggestions: { agents: string[]; tools: string[] };
}

export const isFiltered = (view: InboxView) => Boolean(view.session || view.agent || view.tool || view.q);

export function InboxFilters({ view, onChange, sessions, suggestions }: InboxFiltersProps) {
  const labels = sessionLabels(sessions);
  return (
    <div className="flex flex-wrap items-center gap-2 border-b border-slate-200 bg-white px-3 py-2 text-sm">
      <input
        type="search"
        aria-label="Search arguments, sessions and reasons"
        placeholder="Search arguments, sessions…"
        value={view.q}
        onChange={(event) => onChange({ q: event.target.value })}
        className="w-full min-w-0 rounded border border-slate-300 px-2 py-1 lg:w-64"
      />
      <select aria-label="Filter by session" value={view.session} onChange={(event) => onChange({ session: event.target.value })} className="w-full truncate rounded border border-slate-300 px-2 py-1 sm:w-44">
        <option value="">All sessions</option>
        {sessions.map((session) => (
          <option key={session.id} value={session.id}>
            {labels.get(session.id)}
          </option>
        ))}
      </select>
      <input aria-label="Filter by agent" placeholder="Agent" list="agent-suggestions" value={view.agent} onChange={(event) => onChange({ agent: event.target.value })} className="min-w-[7rem] flex-1 rounded border border-slate-300 px-2 py-1 sm:w-32 sm:min-w-0 sm:flex-none" />
      <datalist id="agent-suggestions">
        {suggestions.agents.map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
      <input aria-label="Filter by tool" placeholder="Tool" list="tool-suggestions" value={view.tool} onChange={(event) => onChange({ tool: event.target.value })} className="min-w-[7rem] flex-1 rounded border border-slate-300 px-2 py-1 sm:w-32 sm:min-w-0 sm:flex-none" />
      <datalist id="tool-suggestions">
        {suggestions.tools.map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
      {view.tab === "pending" ? (
        <select aria-label="Sort pending approvals" value={view.sort} onChange={(event) => onChange({ sort: event.target.value as PendingSort })} className="rounded border border-slate-300 px-2 py-1">
          {(Object.keys(SORT_LABEL) as PendingSort[]).map((value) => (
            <option key={value} value={value}>
              {SORT_LABEL[value]}
            </option>
          ))}
        </select>
      ) : null}
      <button type="button" disabled={!isFiltered(view)} onClick={() => onChange(NO_FILTERS)} className="rounded px-2 py-1 text-slate-600 hover:bg-slate-100 disabled:opacity-40">
        Clear filters
      </button>
    </div>
  );
}
