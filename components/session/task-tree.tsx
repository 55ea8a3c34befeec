"use client";
// A session's task tree: orchestrators and agents nested, live statuses, the
// paused path highlighted from the root down to the request waiting for a human,
// follow-on requests marked. Rows are virtualized so a 2,000-task tree stays fast.
import Link from "next/link";
import { useVirtualizer } from "@tanstack/react-virtual";
import { memo, useCallback, useMemo, useRef, useState, type KeyboardEvent } from "react";
import type { TaskNode } from "@/lib/types";
import { FrameworkBadge } from "../framework-badge";
import { StatusBadge } from "../ui";

const ROW = 44;
const MAX_CHIPS = 3;

interface Row {
  node: TaskNode;
  depth: number;
  expanded: boolean;
  onPausedPath: boolean;
  waitingHere: boolean;
  posInSet: number;
  setSize: number;
}

/** Requests on the paused path, and the leaves of it: paused requests no paused child request explains. */
export function pausedPath(roots: TaskNode[]) {
  const paused = new Set<string>();
  const pausedParents = new Set<string>();
  const visit = (node: TaskNode) => {
    for (const request of node.requests) {
      if (request.pendingApprovals > 0) {
        paused.add(request.requestId);
        if (request.parentRequestId) pausedParents.add(request.parentRequestId);
      }
    }
    node.children.forEach(visit);
  };
  roots.forEach(visit);
  const leaves = new Set([...paused].filter((id) => !pausedParents.has(id)));
  return { paused, leaves };
}

function flatten(roots: TaskNode[], collapsed: Set<string>, paused: Set<string>, leaves: Set<string>): Row[] {
  const rows: Row[] = [];
  const walk = (nodes: TaskNode[], depth: number) => {
    nodes.forEach((node, index) => {
      const expanded = !collapsed.has(node.taskId);
      rows.push({
        node,
        depth,
        expanded,
        onPausedPath: node.requests.some((request) => paused.has(request.requestId)),
        waitingHere: node.requests.some((request) => leaves.has(request.requestId)),
        posInSet: index + 1,
        setSize: nodes.length,
      });
      if (expanded) walk(node.children, depth + 1);
    });
  };
  walk(roots, 0);
  return rows;
}

const shortId = (id: string) => `…${id.slice(-6)}`;

const TreeRow = memo(function TreeRow({
  row,
  selected,
  focused,
  approvalFor,
  onSelect,
  onToggle,
}: {
  row: Row;
  selected: boolean;
  focused: boolean;
  approvalFor(requestId: string): string | undefined;
  onSelect(taskId: string): void;
  onToggle(taskId: string): void;
}) {
  const { node } = row;
  const hasChildren = node.children.length > 0;
  const leafRequest = row.waitingHere ? node.requests.find((request) => request.pendingApprovals > 0 && approvalFor(request.requestId)) : undefined;
  const approvalId = leafRequest ? approvalFor(leafRequest.requestId) : undefined;
  const extra = node.requests.length - MAX_CHIPS;
  return (
    <div
      role="treeitem"
      aria-level={row.depth + 1}
      aria-posinset={row.posInSet}
      aria-setsize={row.setSize}
      aria-expanded={hasChildren ? row.expanded : undefined}
      aria-selected={selected}
      aria-label={`${node.kind === "ORCHESTRATOR" ? "Orchestrator" : "Agent"} ${node.agent}, ${node.status}${row.waitingHere ? ", waiting for approval" : row.onPausedPath ? ", on the paused path" : ""}`}
      data-task-id={node.taskId}
      data-paused-path={row.onPausedPath || undefined}
      tabIndex={focused ? 0 : -1}
      onClick={() => onSelect(node.taskId)}
      style={{ height: ROW, paddingLeft: 8 + row.depth * 20 }}
      className={`flex cursor-pointer items-center gap-2 border-b border-l-4 border-b-slate-100 pr-3 text-sm outline-none focus-visible:ring-2 focus-visible:ring-inset focus-visible:ring-sky-500 ${
        row.onPausedPath ? "border-l-amber-500 bg-amber-50" : "border-l-transparent bg-white"
      } ${selected ? "!bg-sky-100" : "hover:bg-slate-50"}`}
    >
      <button
        type="button"
        tabIndex={-1}
        aria-label={hasChildren ? `${row.expanded ? "Collapse" : "Expand"} ${node.agent}` : `${node.agent} has no sub-tasks`}
        disabled={!hasChildren}
        onClick={(event) => {
          event.stopPropagation();
          onToggle(node.taskId);
        }}
        className="h-5 w-5 shrink-0 rounded text-slate-500 hover:bg-slate-200 disabled:invisible"
      >
        {row.expanded ? "▾" : "▸"}
      </button>
      <span className={`shrink-0 rounded px-1 text-[10px] font-semibold uppercase ${node.kind === "ORCHESTRATOR" ? "bg-violet-100 text-violet-900" : "bg-slate-200 text-slate-700"}`}>
        {node.kind === "ORCHESTRATOR" ? "orch" : "agent"}
      </span>
      <span className="min-w-0 truncate font-medium">{node.agent}</span>
      <FrameworkBadge framework={node.framework} />
      <StatusBadge status={node.status} />
      {row.waitingHere ? (
        approvalId ? (
          <Link href={`/?approval=${approvalId}`} onClick={(event) => event.stopPropagation()} className="shrink-0 rounded bg-amber-500 px-1.5 py-0.5 text-[11px] font-semibold text-white hover:bg-amber-600">
            waiting for approval →
          </Link>
        ) : (
          <span className="shrink-0 rounded bg-amber-500 px-1.5 py-0.5 text-[11px] font-semibold text-white">waiting for approval</span>
        )
      ) : null}
      <span className="ml-auto flex min-w-0 shrink items-center gap-1 overflow-hidden">
        {node.requests.slice(-MAX_CHIPS).map((request) => {
          const index = node.requests.indexOf(request);
          return (
            <span
              key={request.requestId}
              title={`${request.requestId}: ${request.status}${index > 0 ? " (follow-on request)" : ""}`}
              className={`shrink-0 rounded border px-1 font-mono text-[10px] ${request.pendingApprovals > 0 ? "border-amber-400 bg-amber-100" : "border-slate-200 bg-slate-50"}`}
            >
              {index > 0 ? `follow-on #${index} ` : ""}
              {shortId(request.requestId)} {request.status.toLowerCase()}
            </span>
          );
        })}
        {extra > 0 ? <span className="shrink-0 text-[10px] text-slate-500">+{extra} earlier</span> : null}
      </span>
    </div>
  );
});

export function TaskTree({
  roots,
  selectedTaskId,
  onSelect,
  approvalFor,
}: {
  roots: TaskNode[];
  selectedTaskId: string | null;
  onSelect(taskId: string): void;
  approvalFor(requestId: string): string | undefined;
}) {
  const [collapsed, setCollapsed] = useState<Set<string>>(() => new Set());
  const [focusIndex, setFocusIndex] = useState(0);
  const containerRef = useRef<HTMLDivElement>(null);
  const { paused, leaves } = useMemo(() => pausedPath(roots), [roots]);
  const rows = useMemo(() => flatten(roots, collapsed, paused, leaves), [roots, collapsed, paused, leaves]);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => containerRef.current,
    estimateSize: () => ROW,
    getItemKey: (index) => rows[index]!.node.taskId,
    overscan: 8,
  });
  const shown = virtualizer.getVirtualItems();

  const toggle = useCallback((taskId: string) => {
    setCollapsed((current) => {
      const next = new Set(current);
      if (next.has(taskId)) next.delete(taskId);
      else next.add(taskId);
      return next;
    });
  }, []);

  const focusRow = (index: number) => {
    const clamped = Math.max(0, Math.min(rows.length - 1, index));
    setFocusIndex(clamped);
    virtualizer.scrollToIndex(clamped, { align: "auto" });
    requestAnimationFrame(() => containerRef.current?.querySelector<HTMLElement>(`[data-task-id="${rows[clamped]?.node.taskId}"]`)?.focus());
  };

  function onKeyDown(event: KeyboardEvent) {
    const row = rows[focusIndex];
    if (!row) return;
    const keys: Record<string, () => void> = {
      ArrowDown: () => focusRow(focusIndex + 1),
      ArrowUp: () => focusRow(focusIndex - 1),
      Home: () => focusRow(0),
      End: () => focusRow(rows.length - 1),
      ArrowRight: () => (row.node.children.length && !row.expanded ? toggle(row.node.taskId) : focusRow(focusIndex + 1)),
      ArrowLeft: () => {
        if (row.expanded && row.node.children.length) toggle(row.node.taskId);
        else {
          const parent = rows.findIndex((candidate) => candidate.node.taskId === row.node.parentTaskId);
          if (parent >= 0) focusRow(parent);
        }
      },
      Enter: () => onSelect(row.node.taskId),
      " ": () => onSelect(row.node.taskId),
    };
    const action = keys[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  }

  const allCollapsed = collapsed.size > 0;
  const firstPaused = rows.findIndex((row) => row.waitingHere);

  return (
    <div className="flex h-full min-h-0 flex-col">
      <div className="flex h-10 shrink-0 items-center gap-2 border-b border-slate-200 bg-white px-3 text-xs">
        <span className="text-slate-600">
          {rows.length} shown{paused.size ? ` · ${leaves.size} waiting for approval` : ""}
        </span>
        <span className="ml-auto" />
        {firstPaused >= 0 ? (
          <button type="button" onClick={() => focusRow(firstPaused)} className="rounded border border-amber-400 bg-amber-50 px-2 py-0.5 font-medium text-amber-900">
            Jump to paused task
          </button>
        ) : null}
        {roots.some((root) => root.children.length > 0) ? (
          <button
            type="button"
            onClick={() => setCollapsed(allCollapsed ? new Set() : new Set(roots.flatMap(function ids(node): string[] { return node.children.length ? [node.taskId, ...node.children.flatMap(ids)] : []; })))}
            className="rounded border border-slate-300 px-2 py-0.5"
          >
            {allCollapsed ? "Expand all" : "Collapse all"}
          </button>
        ) : null}
      </div>
      <div ref={containerRef} className="relative min-h-0 flex-1 overflow-auto bg-white">
        <div role="tree" aria-label="Task tree" onKeyDown={onKeyDown} style={{ height: virtualizer.getTotalSize() }} className="relative">
          <div style={{ transform: `translateY(${shown[0]?.start ?? 0}px)` }}>
            {shown.map(({ index, key }) => (
              <TreeRow
                key={key}
                row={rows[index]!}
                selected={rows[index]!.node.taskId === selectedTaskId}
                focused={index === focusIndex}
                approvalFor={approvalFor}
                onSelect={(taskId) => {
                  setFocusIndex(index);
                  onSelect(taskId);
                }}
                onToggle={toggle}
              />
            ))}
          </div>
        </div>
      </div>
    </div>
  );
}
