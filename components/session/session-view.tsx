"use client";
// One session: its live task tree on the left, the selected task (timeline and
// state) on the right. An unknown session id shows the not-found page.
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { notFound, useParams, useSearchParams } from "next/navigation";
import { useCallback, useEffect, useMemo, useState } from "react";
import { isNotFound } from "@/lib/errors";
import { formatTime } from "@/lib/format";
import { useTRPC } from "@/lib/trpc";
import type { TaskNode } from "@/lib/types";
import { ErrorNote, Loading, StatusBadge } from "../ui";
import { TaskPanel } from "./task-panel";
import { TaskTree } from "./task-tree";

function indexTasks(roots: TaskNode[]) {
  const byId = new Map<string, TaskNode>();
  const counts: Record<string, number> = {};
  const walk = (node: TaskNode) => {
    byId.set(node.taskId, node);
    counts[node.status] = (counts[node.status] ?? 0) + 1;
    node.children.forEach(walk);
  };
  roots.forEach(walk);
  return { byId, counts };
}

export function SessionView() {
  const trpc = useTRPC();
  const { id } = useParams<{ id: string }>();
  const params = useSearchParams();
  const [taskId, setTaskId] = useState<string | null>(params.get("task"));
  const tree = useQuery(trpc.task.tree.queryOptions({ sessionId: id }));
  const pendingApprovals = useQuery(trpc.approval.list.queryOptions({ status: "PENDING", sessionId: id, limit: 2000 }, { enabled: tree.isSuccess }));

  useEffect(() => {
    const url = `${window.location.pathname}${taskId ? `?task=${taskId}` : ""}`;
    if (url !== `${window.location.pathname}${window.location.search}`) window.history.replaceState(null, "", url);
  }, [taskId]);

  const index = useMemo(() => indexTasks(tree.data?.roots ?? []), [tree.data]);
  const approvalByRequest = useMemo(() => new Map((pendingApprovals.data?.items ?? []).map((item) => [item.requestId, item.approvalId])), [pendingApprovals.data]);
  const approvalFor = useCallback((requestId: string) => approvalByRequest.get(requestId), [approvalByRequest]);

  if (tree.error && isNotFound(tree.error)) notFound();
  if (tree.isPending) {
    return (
      <div className="p-6">
        <Loading>Loading the session…</Loading>
      </div>
    );
  }
  if (tree.error) {
    return (
      <div className="p-6">
        <ErrorNote title="Could not load this session" error={tree.error} />
      </div>
    );
  }
  const { session, roots } = tree.data;
  const selected = taskId ? index.byId.get(taskId) : undefined;

  return (
    <div className="flex h-full min-h-0 flex-col">
      <header className="flex shrink-0 flex-wrap items-center gap-3 border-b border-slate-200 bg-white px-6 py-3">
        <Link href="/sessions" className="text-sm text-slate-500 hover:text-slate-900">
          Sessions /
        </Link>
        <h1 className="text-lg font-semibold">{session.title ?? session.id}</h1>
        <StatusBadge status={session.status} />
        <span className="font-mono text-xs text-slate-500">{session.id}</span>
        <span className="text-xs text-slate-500">started {formatTime(session.createdAt)}</span>
        <span className="ml-auto flex gap-2 text-xs" aria-label="Task counts">
          {(["RUNNING", "PAUSED", "COMPLETED", "FAILED", "CANCELED"] as const).map((status) =>
            index.counts[status] ? <StatusBadge key={status} status={status} label={`${index.counts[status]} ${status.toLowerCase()}`} /> : null,
          )}
        </span>
      </header>
      {/* Side by side from a tablet's width up; on a phone the tree above (a third of the screen, scrolling) and the task below. */}
      <div className="flex min-h-0 flex-1 flex-col md:flex-row">
        <section aria-label="Tasks" className="flex max-h-[35vh] shrink-0 flex-col border-b border-slate-200 md:max-h-none md:w-[50%] md:min-w-[26rem] md:shrink md:border-b-0 md:border-r">
          {roots.length === 0 ? (
            <p className="p-6 text-sm text-slate-500">No tasks in this session yet. They appear when an agent begins a request.</p>
          ) : (
            <TaskTree roots={roots} selectedTaskId={taskId} onSelect={setTaskId} approvalFor={approvalFor} />
          )}
        </section>
        <section aria-label="Task detail" className="min-h-0 min-w-0 flex-1 overflow-auto bg-white p-4 md:p-5">
          {selected ? (
            <TaskPanel key={selected.taskId} task={selected} />
          ) : taskId ? (
            <p role="alert" className="text-sm text-slate-700">
              Task <span className="font-mono">{taskId}</span> is not in this session. Pick a task from the tree.
            </p>
          ) : (
            <p className="text-sm text-slate-500">Select a task to see its requests, timeline and state.</p>
          )}
        </section>
      </div>
    </div>
  );
}
