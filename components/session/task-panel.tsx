"use client";
// The selected task of a session: its requests (follow-ons marked), a cancel
// control for those who may decide, and tabs for its timeline and its state.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { formatTime } from "@/lib/format";
import { useTRPC } from "@/lib/trpc";
import type { TaskNode } from "@/lib/types";
import { canDecide, useOperator } from "../app-shell";
import { StatusBadge } from "../ui";
import { StatePanel } from "./state-panel";
import { TaskTimeline } from "./task-timeline";

function CancelTask({ task }: { task: TaskNode }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const cancel = useMutation(
    trpc.task.cancel.mutationOptions({
      onSettled: () => {
        setConfirming(false);
        void queryClient.invalidateQueries();
      },
    }),
  );
  if (task.status !== "RUNNING" && task.status !== "PAUSED") return null;
  return (
    <div className="flex items-center gap-2 text-xs">
      {confirming ? (
        <>
          <span className="font-medium text-red-800">Cancel {task.agent} and every task below it?</span>
          <button type="button" disabled={cancel.isPending} onClick={() => cancel.mutate({ taskId: task.taskId, reason: "canceled by an operator from the console" })} className="rounded bg-red-700 px-2 py-1 font-medium text-white">
            Yes, cancel the task
          </button>
          <button type="button" onClick={() => setConfirming(false)} className="rounded px-2 py-1 text-slate-600">
            Keep it
          </button>
        </>
      ) : (
        <button type="button" onClick={() => setConfirming(true)} className="rounded border border-red-300 px-2 py-1 text-red-800 hover:bg-red-50">
          Cancel task…
        </button>
      )}
      {cancel.error ? (
        <span role="alert" className="text-red-700">
          {cancel.error.message}
        </span>
      ) : null}
    </div>
  );
}

export function TaskPanel({ task }: { task: TaskNode }) {
  const operator = useOperator();
  const [tab, setTab] = useState<"timeline" | "state">("timeline");
  const requestOrder = useMemo(() => new Map(task.requests.map((request, index) => [request.requestId, index])), [task.requests]);

  const tabButton = (value: typeof tab, label: string) => (
    <button type="button" role="tab" aria-selected={tab === value} onClick={() => setTab(value)} className={`px-3 py-1.5 text-sm font-medium ${tab === value ? "border-b-2 border-slate-900" : "text-slate-500 hover:text-slate-900"}`}>
      {label}
    </button>
  );

  return (
    <article aria-label={`Task ${task.agent}`} className="space-y-4">
      <header className="space-y-1">
        <div className="flex items-center gap-2">
          <h2 className="text-lg font-semibold">{task.agent}</h2>
          <span className="text-xs uppercase text-slate-500">{task.kind.toLowerCase()}</span>
          <StatusBadge status={task.status} />
        </div>
        <p className="font-mono text-xs text-slate-500">
          {task.taskId}
          {task.parentTaskId ? ` · parent ${task.parentTaskId}` : " · root task"}
        </p>
        {canDecide(operator) ? <CancelTask task={task} /> : null}
      </header>

      <section aria-labelledby="requests-heading">
        <h3 id="requests-heading" className="mb-1 text-xs font-semibold uppercase tracking-wide text-slate-500">
          Requests ({task.requests.length}
          {task.requests.length > 1 ? `, ${task.requests.length - 1} follow-on` : ""})
        </h3>
        <ol className="space-y-1 text-xs" aria-label="Requests of this task">
          {task.requests.map((request, index) => (
            <li key={request.requestId} className={`flex flex-wrap items-center gap-2 rounded px-2 py-1 ${request.pendingApprovals > 0 ? "bg-amber-50 ring-1 ring-amber-300" : "bg-slate-50"}`}>
              <span className="w-20 shrink-0 font-medium">{index === 0 ? "first" : `follow-on #${index}`}</span>
              <span className="font-mono">{request.requestId}</span>
              <StatusBadge status={request.status} />
              {request.pendingApprovals > 0 ? <span className="font-medium text-amber-900">{request.pendingApprovals} pending approval(s) on its chain</span> : null}
              <span className="ml-auto tabular-nums text-slate-500">
                {formatTime(request.createdAt).slice(11)}
                {request.endedAt ? ` → ${formatTime(request.endedAt).slice(11)}` : ""}
              </span>
              {request.parentRequestId ? <span className="w-full pl-22 font-mono text-[10px] text-slate-500">invoked by {request.parentRequestId}</span> : null}
            </li>
          ))}
        </ol>
      </section>

      <div>
        <div role="tablist" aria-label="Task views" className="mb-3 flex gap-1 border-b border-slate-200">
          {tabButton("timeline", "Timeline")}
          {tabButton("state", "State")}
        </div>
        {tab === "timeline" ? <TaskTimeline taskId={task.taskId} requestOrder={requestOrder} /> : <StatePanel taskId={task.taskId} />}
      </div>
    </article>
  );
}
