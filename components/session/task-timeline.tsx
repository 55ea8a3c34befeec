"use client";
// One task's timeline: its interaction history (invocations, responses, errors)
// and execution trace (tool calls, results, approvals), grouped by request so
// follow-on requests read as such.
import { useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { formatTime } from "@/lib/format";
import { useTRPC } from "@/lib/trpc";
import type { TimelineEvent } from "@/lib/types";
import { compactJson, Empty, ErrorNote, Loading } from "../ui";
import { JsonTree } from "../json-tree";

type Filter = "ALL" | "INTERACTION" | "EXECUTION";

const TYPE_STYLE: Record<string, string> = {
  invocation: "bg-sky-100 text-sky-900",
  response: "bg-emerald-100 text-emerald-900",
  error: "bg-red-100 text-red-900",
  "approval.requested": "bg-amber-100 text-amber-900",
  "approval.decided": "bg-amber-50 text-amber-900",
  "tool.executed": "bg-violet-100 text-violet-900",
};

function EventRow({ event }: { event: TimelineEvent }) {
  const hasData = event.data !== null && event.data !== undefined;
  return (
    <li className="grid grid-cols-[4rem_10rem_1fr] items-start gap-2 border-b border-slate-100 py-1.5 text-xs [content-visibility:auto] [contain-intrinsic-size:auto_32px]">
      <time dateTime={event.at} className="tabular-nums text-slate-500" title={formatTime(event.at)}>
        {formatTime(event.at).slice(11)}
      </time>
      <span className="flex flex-col gap-0.5">
        <span className={`w-fit max-w-full truncate rounded px-1 font-mono font-medium ${TYPE_STYLE[event.type] ?? "bg-slate-100 text-slate-800"}`}>{event.type}</span>
        <span className="text-[10px] uppercase tracking-wide text-slate-400">{event.category === "INTERACTION" ? "interaction" : "execution"}</span>
      </span>
      <div className="min-w-0">
        {event.name ? <span className="mr-2 font-mono font-semibold">{event.name}</span> : null}
        {hasData ? (
          <details>
            {/* One line that ends in an ellipsis, never a value broken mid-token; the whole is a tree below. */}
            <summary className="cursor-pointer truncate font-mono text-slate-600">{compactJson(event.data, 140)}</summary>
            <div className="mt-1">
              <JsonTree value={event.data} label={`Data of ${event.type} event`} />
            </div>
          </details>
        ) : null}
      </div>
    </li>
  );
}

export function TaskTimeline({ taskId, requestOrder }: { taskId: string; requestOrder: Map<string, number> }) {
  const trpc = useTRPC();
  const [filter, setFilter] = useState<Filter>("ALL");
  const timeline = useQuery(trpc.task.timeline.queryOptions({ taskId, limit: 2000 }));

  const groups = useMemo(() => {
    const events = (timeline.data?.events ?? []).filter((event) => filter === "ALL" || event.category === filter);
    const result: { requestId: string; events: TimelineEvent[] }[] = [];
    for (const event of events) {
      const last = result.at(-1);
      if (last && last.requestId === event.requestId) last.events.push(event);
      else result.push({ requestId: event.requestId, events: [event] });
    }
    return result;
  }, [timeline.data, filter]);

  const segment = (value: Filter, label: string) => (
    <button
      type="button"
      aria-pressed={filter === value}
      onClick={() => setFilter(value)}
      className={`px-2 py-0.5 ${filter === value ? "bg-slate-900 text-white" : "bg-white text-slate-700 hover:bg-slate-100"}`}
    >
      {label}
    </button>
  );

  return (
    <section aria-label="Timeline" className="space-y-2">
      <div role="group" aria-label="Show events" className="inline-flex overflow-hidden rounded border border-slate-300 text-xs">
        {segment("ALL", "All")}
        {segment("INTERACTION", "Interaction history")}
        {segment("EXECUTION", "Execution trace")}
      </div>
      {timeline.isPending ? (
        <Loading>Loading the timeline…</Loading>
      ) : timeline.error ? (
        <ErrorNote title="Could not load the timeline" error={timeline.error} />
      ) : groups.length === 0 ? (
        <Empty>No events {filter === "ALL" ? "yet" : "of this kind"} for this task.</Empty>
      ) : (
        groups.map((group, index) => {
          const order = requestOrder.get(group.requestId) ?? 0;
          return (
            <div key={`${group.requestId}-${index}`}>
              <h4 className="sticky top-0 z-10 bg-white py-1 text-xs font-semibold text-slate-700">
                Request <span className="font-mono">{group.requestId}</span>
                {order > 0 ? <span className="ml-2 rounded bg-slate-200 px-1 font-normal">follow-on #{order}</span> : <span className="ml-2 font-normal text-slate-500">first request</span>}
              </h4>
              <ol aria-label={`Events of request ${group.requestId}`}>
                {group.events.map((event) => (
                  <EventRow key={event.id} event={event} />
                ))}
              </ol>
            </div>
          );
        })
      )}
      {timeline.data && timeline.data.events.length >= 2000 ? <p className="text-xs text-slate-500">Showing the first 2,000 events of this task.</p> : null}
    </section>
  );
}
