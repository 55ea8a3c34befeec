"use client";
// The approval inbox, the console's landing page: pending approvals most urgent
// first (or newest first), live; a detail panel to decide; keyboard j/k/a/r/e/x; multi-select with bulk
// approve and reject; filters by session, agent and tool; and the history of
// decided approvals. Filters, tab and the open approval live in the URL.
import { keepPreviousData, useInfiniteQuery, useQuery, useQueryClient } from "@tanstack/react-query";
import { useSearchParams } from "next/navigation";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { decidedByMe, errorMessage } from "@/lib/errors";
import { useTRPC, useTRPCClient } from "@/lib/trpc";
import type { ApprovalItem, DecisionAction } from "@/lib/types";
import { useVirtualRows } from "@/lib/virtual";
import { canDecide, useOperator } from "../app-shell";
import { Empty, ErrorNote, Loading } from "../ui";
import { ApprovalDetail } from "./approval-detail";
import { HistoryRow, PendingRow, ROW_HEIGHT } from "./approval-rows";
import type { DecisionPanelHandle } from "./decision-panel";
import { orderPending, SORT_LABEL, type PendingSort } from "./pending-order";

type Tab = "pending" | "history";
interface Filters {
  session: string;
  agent: string;
  tool: string;
}

const PENDING_LIMIT = 2000;
const HISTORY_PAGE = 200;
const DONE_VERB: Record<DecisionAction, string> = { approve: "approved", reject: "rejected", edit: "approved with edits", respond: "answered" };

/** "send_email ×2, refund": which tools a bulk decision covers. */
function toolCounts(items: readonly ApprovalItem[]): string {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(item.tool, (counts.get(item.tool) ?? 0) + 1);
  return [...counts].map(([tool, count]) => (count > 1 ? `${tool} ×${count}` : tool)).join(", ");
}

function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

const SHORTCUTS_KEY = "tollgate.shortcuts";

/** Single-key shortcuts, on unless the operator turned them off on this browser (WCAG 2.1.4). */
function useShortcutsSetting(): [boolean, (on: boolean) => void] {
  const [on, setOn] = useState(true);
  useEffect(() => setOn(window.localStorage.getItem(SHORTCUTS_KEY) !== "off"), []);
  return [
    on,
    (next) => {
      window.localStorage.setItem(SHORTCUTS_KEY, next ? "on" : "off");
      setOn(next);
    },
  ];
}

function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return debounced;
}

export function Inbox() {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const queryClient = useQueryClient();
  const operator = useOperator();
  const decider = canDecide(operator);
  const params = useSearchParams();

  const [tab, setTab] = useState<Tab>(params.get("tab") === "history" ? "history" : "pending");
  const [filters, setFilters] = useState<Filters>({ session: params.get("session") ?? "", agent: params.get("agent") ?? "", tool: params.get("tool") ?? "" });
  const [selectedId, setSelectedId] = useState<string | null>(params.get("approval"));
  const [sort, setSort] = useState<PendingSort>(params.get("sort") === "newest" ? "newest" : "urgent");
  const [shortcuts, setShortcuts] = useShortcutsSetting();
  const [checked, setChecked] = useState<Set<string>>(() => new Set());
  const [status, setStatus] = useState("");
  const [bulkMessage, setBulkMessage] = useState("");
  const [bulkBusy, setBulkBusy] = useState(false);
  // A bulk decision is confirmed first: how many, and which tools.
  const [confirming, setConfirming] = useState<"approve" | "reject" | null>(null);
  const detailRef = useRef<DecisionPanelHandle>(null);
  const listRef = useRef<HTMLDivElement>(null);
  const lastIndex = useRef(0);

  const agent = useDebounced(filters.agent.trim(), 250);
  const tool = useDebounced(filters.tool.trim(), 250);
  const serverFilter = { ...(filters.session ? { sessionId: filters.session } : {}), ...(agent ? { agent } : {}), ...(tool ? { tool } : {}) };

  // Mirror the view into the URL without a navigation, so it can be shared and survives a reload.
  useEffect(() => {
    const next = new URLSearchParams();
    if (tab === "history") next.set("tab", "history");
    if (sort !== "urgent") next.set("sort", sort);
    if (filters.session) next.set("session", filters.session);
    if (agent) next.set("agent", agent);
    if (tool) next.set("tool", tool);
    if (selectedId) next.set("approval", selectedId);
    const query = next.toString();
    const url = `${window.location.pathname}${query ? `?${query}` : ""}`;
    if (url !== `${window.location.pathname}${window.location.search}`) window.history.replaceState(null, "", url);
  }, [tab, sort, filters.session, agent, tool, selectedId]);

  const sessions = useQuery(trpc.session.list.queryOptions({ limit: 1000 }, { staleTime: 30_000 }));
  const sessionTitles = useMemo(() => new Map((sessions.data?.items ?? []).map((s) => [s.id, s.title ?? s.id])), [sessions.data]);
  const sessionLabel = useCallback((id: string) => sessionTitles.get(id) ?? id, [sessionTitles]);

  const pending = useQuery({
    ...trpc.approval.list.queryOptions({ status: "PENDING", limit: PENDING_LIMIT, ...serverFilter }),
    placeholderData: keepPreviousData,
  });
  const history = useInfiniteQuery({
    ...trpc.approval.list.infiniteQueryOptions(
      { status: "DECIDED", limit: HISTORY_PAGE, ...serverFilter },
      { getNextPageParam: (last) => last.nextCursor ?? undefined },
    ),
    enabled: tab === "history",
    placeholderData: keepPreviousData,
  });

  const pendingItems = useMemo(() => (pending.data ? orderPending(pending.data.items, sort) : undefined), [pending.data, sort]);
  const historyItems = useMemo(() => history.data?.pages.flatMap((page) => page.items) ?? [], [history.data]);
  const items: ApprovalItem[] = (tab === "pending" ? pendingItems : historyItems) ?? [];
  const selectedIndex = selectedId ? items.findIndex((item) => item.approvalId === selectedId) : -1;
  if (selectedIndex >= 0) lastIndex.current = selectedIndex;
  const selectedItem = selectedIndex >= 0 ? items[selectedIndex] : undefined;

  // Names seen so far, suggested in the agent and tool filters.
  const suggestions = useMemo(() => {
    const agents = new Set<string>();
    const tools = new Set<string>();
    for (const item of [...(pendingItems ?? []), ...historyItems]) {
      agents.add(item.agent);
      tools.add(item.tool);
    }
    return { agents: [...agents].sort(), tools: [...tools].sort() };
  }, [pendingItems, historyItems]);

  // Checked ids that are still pending (decided ones drop out of the selection).
  const checkedPending = useMemo(() => (pendingItems ?? []).filter((item) => checked.has(item.approvalId)), [pendingItems, checked]);

  const virtual = useVirtualRows(listRef, items.length, ROW_HEIGHT);

  // Keep the row at the top of the viewport in place when newer approvals arrive above it.
  const previousItems = useRef<ApprovalItem[]>([]);
  useLayoutEffect(() => {
    const list = listRef.current;
    const before = previousItems.current;
    previousItems.current = items;
    if (!list || list.scrollTop === 0 || before === items) return;
    const topIndex = Math.floor(list.scrollTop / ROW_HEIGHT);
    const anchor = before[topIndex];
    if (!anchor) return;
    const now = items.findIndex((item) => item.approvalId === anchor.approvalId);
    if (now >= 0 && now !== topIndex) list.scrollTop += (now - topIndex) * ROW_HEIGHT;
  }, [items]);

  const open = useCallback((id: string) => setSelectedId(id), []);
  const toggle = useCallback((id: string) => {
    setChecked((current) => {
      const next = new Set(current);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  }, []);

  const move = useCallback(
    (delta: 1 | -1) => {
      if (items.length === 0) return;
      let index: number;
      if (selectedIndex >= 0) index = selectedIndex + delta;
      else if (selectedId) index = delta === 1 ? lastIndex.current : lastIndex.current - 1; // the open one was decided and left the list
      else index = 0;
      index = Math.max(0, Math.min(items.length - 1, index));
      setSelectedId(items[index]!.approvalId);
      virtual.scrollToIndex(index);
    },
    [items, selectedIndex, selectedId, virtual],
  );

  useEffect(() => {
    function onKey(event: KeyboardEvent) {
      if (!shortcuts || event.metaKey || event.ctrlKey || event.altKey || isTyping(event.target)) return;
      const key = event.key;
      if (key === "j" || key === "ArrowDown") {
        event.preventDefault();
        move(1);
      } else if (key === "k" || key === "ArrowUp") {
        event.preventDefault();
        move(-1);
      } else if (key === "a") {
        event.preventDefault();
        detailRef.current?.approve();
      } else if (key === "r") {
        event.preventDefault();
        detailRef.current?.open("reject");
      } else if (key === "e") {
        event.preventDefault();
        detailRef.current?.open("edit");
      } else if (key === "x" && tab === "pending" && selectedId && decider) {
        event.preventDefault();
        toggle(selectedId);
      }
    }
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [move, toggle, selectedId, tab, decider, shortcuts]);

  const onDecided = useCallback(
    (action: DecisionAction) => {
      const item = selectedItem;
      setStatus(`You ${DONE_VERB[action]} ${item ? `${item.tool} for ${item.agent}` : "the approval"}.`);
      // Auto-advance: the next pending approval opens (the one below, else the one above);
      // with none left, the decided one stays open with its outcome.
      if (tab !== "pending" || selectedIndex < 0) return;
      const next = items[selectedIndex + 1] ?? items[selectedIndex - 1];
      if (next) {
        setSelectedId(next.approvalId);
        virtual.scrollToIndex(items.indexOf(next));
      }
    },
    [selectedItem, selectedIndex, items, tab, virtual],
  );

  async function bulk(action: "approve" | "reject") {
    const targets = checkedPending;
    const allowed = targets.filter((item) => item.allow.includes(action));
    const skipped = targets.length - allowed.length;
    setBulkBusy(true);
    const message = bulkMessage.trim();
    let done = 0;
    const late: string[] = [];
    const failed: string[] = [];
    try {
      const { results } = allowed.length
        ? await client.approval.decideMany.mutate({
            approvalIds: allowed.map((item) => item.approvalId),
            action,
            ...(action === "reject" && message ? { message } : {}),
          })
        : { results: [] };
      for (const result of results) {
        if (result.ok) {
          if (decidedByMe(result, operator.email)) done += 1;
          else late.push(result.decision?.decidedBy ?? "another operator");
        } else if (result.code === "CONFLICT" && typeof result.details?.decidedBy === "string") {
          late.push(result.details.decidedBy);
        } else {
          failed.push(result.message);
        }
      }
    } catch (error) {
      failed.push(errorMessage(error));
    } finally {
      setBulkBusy(false);
    }
    setConfirming(null);
    const parts = [`You ${action === "approve" ? "approved" : "rejected"} ${done} of ${targets.length}.`];
    if (late.length) parts.push(`${late.length} already decided by ${[...new Set(late)].join(", ")}.`);
    if (skipped) parts.push(`${skipped} skipped: the agent does not allow "${action}" for ${skipped === 1 ? "it" : "them"}.`);
    if (failed.length) parts.push(`${failed.length} failed: ${failed[0]}`);
    setStatus(parts.join(" "));
    setChecked(new Set());
    setBulkMessage("");
    void queryClient.invalidateQueries({ queryKey: trpc.approval.pathKey() });
  }

  const activeQuery = tab === "pending" ? pending : history;
  const filtered = Boolean(filters.session || filters.agent || filters.tool);
  const allShownChecked = tab === "pending" && items.length > 0 && checkedPending.length === items.length;

  const tabButton = (value: Tab, label: string) => (
    <button
      type="button"
      role="tab"
      aria-selected={tab === value}
      onClick={() => {
        setTab(value);
        setSelectedId(null);
      }}
      className={`rounded-t px-3 py-2 text-sm font-medium ${tab === value ? "border-b-2 border-slate-900 text-slate-900" : "text-slate-500 hover:text-slate-900"}`}
    >
      {label}
    </button>
  );

  return (
    <div className="flex h-full min-h-0">
      {/* On a phone: the list, or the open approval with a way back; side by side from md up. */}
      <section aria-label="Approvals" className={`${selectedId ? "hidden md:flex" : "flex"} w-full min-w-0 flex-col border-r border-slate-200 md:w-[56%] md:min-w-[24rem]`}>
        <div className="flex items-end justify-between border-b border-slate-200 bg-white px-3">
          <div role="tablist" aria-label="Inbox views" className="flex gap-1">
            {tabButton("pending", `Pending (${pendingItems ? (pending.data?.total ?? pendingItems.length) : "…"})`)}
            {tabButton("history", "History")}
          </div>
          <h1 className="sr-only">Approval inbox</h1>
        </div>

        <div className="flex flex-wrap items-center gap-2 border-b border-slate-200 bg-white px-3 py-2 text-sm">
          <select aria-label="Filter by session" value={filters.session} onChange={(event) => setFilters({ ...filters, session: event.target.value })} className="w-full truncate rounded border border-slate-300 px-2 py-1 sm:w-52">
            <option value="">All sessions</option>
            {(sessions.data?.items ?? []).map((session) => (
              <option key={session.id} value={session.id}>
                {session.title ?? session.id}
              </option>
            ))}
          </select>
          <input aria-label="Filter by agent" placeholder="Agent" list="agent-suggestions" value={filters.agent} onChange={(event) => setFilters({ ...filters, agent: event.target.value })} className="min-w-0 flex-1 rounded border border-slate-300 px-2 py-1 sm:w-36 sm:flex-none" />
          <datalist id="agent-suggestions">
            {suggestions.agents.map((name) => (
              <option key={name} value={name} />
            ))}
          </datalist>
          <input aria-label="Filter by tool" placeholder="Tool" list="tool-suggestions" value={filters.tool} onChange={(event) => setFilters({ ...filters, tool: event.target.value })} className="min-w-0 flex-1 rounded border border-slate-300 px-2 py-1 sm:w-36 sm:flex-none" />
          <datalist id="tool-suggestions">
            {suggestions.tools.map((name) => (
              <option key={name} value={name} />
            ))}
          </datalist>
          {tab === "pending" ? (
            <select aria-label="Sort pending approvals" value={sort} onChange={(event) => setSort(event.target.value as PendingSort)} className="rounded border border-slate-300 px-2 py-1">
              {(Object.keys(SORT_LABEL) as PendingSort[]).map((value) => (
                <option key={value} value={value}>
                  {SORT_LABEL[value]}
                </option>
              ))}
            </select>
          ) : null}
          <button type="button" disabled={!filtered} onClick={() => setFilters({ session: "", agent: "", tool: "" })} className="rounded px-2 py-1 text-slate-600 hover:bg-slate-100 disabled:opacity-40">
            Clear filters
          </button>
        </div>

        {tab === "pending" && decider ? (
          <div aria-label="Bulk actions" role="group" className="flex h-11 shrink-0 items-center gap-2 border-b border-slate-200 bg-slate-50 px-3 text-sm">
            <input
              type="checkbox"
              aria-label="Select all shown approvals"
              checked={allShownChecked}
              disabled={items.length === 0}
              onChange={() => setChecked(allShownChecked ? new Set() : new Set(items.map((item) => item.approvalId)))}
              className="h-4 w-4"
            />
            {checkedPending.length === 0 ? (
              <span className="truncate text-slate-500">Select approvals (x or the checkboxes) to decide several at once.</span>
            ) : (
              <>
                <span className="font-medium">{checkedPending.length} selected</span>
                <button type="button" disabled={bulkBusy} onClick={() => setConfirming("approve")} className="rounded bg-emerald-700 px-2 py-1 font-medium text-white disabled:opacity-50">
                  Approve {checkedPending.length}
                </button>
                <input aria-label="Rejection message for the selected approvals" placeholder="Rejection message (optional)" value={bulkMessage} onChange={(event) => setBulkMessage(event.target.value)} className="min-w-0 flex-1 rounded border border-slate-300 px-2 py-1" />
                <button type="button" disabled={bulkBusy} onClick={() => setConfirming("reject")} className="rounded border border-red-300 bg-white px-2 py-1 font-medium text-red-800 disabled:opacity-50">
                  Reject {checkedPending.length}
                </button>
                <button type="button" onClick={() => setChecked(new Set())} className="rounded px-2 py-1 text-slate-600 hover:bg-slate-100">
                  Clear selection
                </button>
              </>
            )}
          </div>
        ) : null}

        {confirming && checkedPending.length > 0 ? (
          <div role="alertdialog" aria-label="Confirm bulk decision" className="flex flex-wrap items-center gap-2 border-b border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950">
            <span className="min-w-0 flex-1">
              {confirming === "approve" ? "Approve" : "Reject"} {checkedPending.length} approval{checkedPending.length === 1 ? "" : "s"}: {toolCounts(checkedPending)}?
            </span>
            <button
              type="button"
              disabled={bulkBusy}
              onClick={() => void bulk(confirming)}
              className={`rounded px-2 py-1 font-medium disabled:opacity-50 ${confirming === "approve" ? "bg-emerald-700 text-white" : "border border-red-300 bg-white text-red-800"}`}
            >
              {bulkBusy ? "Deciding…" : `Yes, ${confirming} ${checkedPending.length}`}
            </button>
            <button type="button" onClick={() => setConfirming(null)} className="rounded px-2 py-1 text-slate-700 hover:bg-amber-100">
              Back
            </button>
          </div>
        ) : null}

        <div ref={listRef} className={`relative min-h-0 flex-1 overflow-auto bg-slate-50 transition-opacity ${activeQuery.isPlaceholderData ? "opacity-50" : ""}`} aria-busy={activeQuery.isFetching}>
          {activeQuery.isPending ? (
            <div className="p-4">
              <Loading>Loading approvals…</Loading>
            </div>
          ) : activeQuery.error ? (
            <div className="p-4">
              <ErrorNote title="Could not load approvals" error={activeQuery.error} />
            </div>
          ) : items.length === 0 ? (
            <div className="p-4">
              <Empty>
                {filtered
                  ? "No approvals match these filters. Clear the filters to see all."
                  : tab === "pending"
                    ? "No approvals are waiting. New requests appear here the moment an agent asks."
                    : "No decided approvals yet."}
              </Empty>
            </div>
          ) : (
            <div role="list" aria-label={tab === "pending" ? "Pending approvals" : "Decided approvals"} style={{ height: virtual.totalHeight + (tab === "history" && history.hasNextPage ? 48 : 0) }} className="relative">
              <div style={{ transform: `translateY(${virtual.offsetTop}px)` }}>
                {items.slice(virtual.start, virtual.end).map((item, offset) => (
                  <div role="listitem" aria-setsize={items.length} aria-posinset={virtual.start + offset + 1} key={item.approvalId}>
                    {tab === "pending" ? (
                      <PendingRow approval={item} sessionLabel={sessionLabel(item.sessionId)} current={item.approvalId === selectedId} checked={checked.has(item.approvalId)} checkable={decider} onOpen={open} onToggle={toggle} />
                    ) : (
                      <HistoryRow approval={item} sessionLabel={sessionLabel(item.sessionId)} current={item.approvalId === selectedId} checked={false} checkable={false} onOpen={open} onToggle={toggle} />
                    )}
                  </div>
                ))}
              </div>
              {tab === "history" && history.hasNextPage ? (
                <div className="absolute bottom-0 left-0 right-0 flex h-12 items-center justify-center">
                  <button type="button" disabled={history.isFetchingNextPage} onClick={() => void history.fetchNextPage()} className="rounded border border-slate-300 bg-white px-3 py-1 text-sm">
                    {history.isFetchingNextPage ? "Loading…" : "Load older decisions"}
                  </button>
                </div>
              ) : null}
            </div>
          )}
        </div>

        <footer className="flex h-9 shrink-0 items-center justify-between gap-4 border-t border-slate-200 bg-white px-3 text-xs text-slate-600">
          <p role="status" aria-live="polite" data-testid="inbox-status" className="truncate font-medium text-slate-900">
            {status}
          </p>
          <div className="flex shrink-0 items-center gap-3">
            {shortcuts && tab === "pending" && decider ? (
              <p aria-label="Keyboard shortcuts" className="hidden md:block">
                <kbd>j</kbd>/<kbd>k</kbd> move · <kbd>a</kbd> approve · <kbd>r</kbd> reject · <kbd>e</kbd> edit · <kbd>x</kbd> select
              </p>
            ) : null}
            <label className="flex items-center gap-1">
              <input type="checkbox" checked={shortcuts} onChange={(event) => setShortcuts(event.target.checked)} />
              Single-key shortcuts
            </label>
          </div>
        </footer>
      </section>

      <section aria-label="Approval detail" className={`${selectedId ? "block" : "hidden md:block"} min-w-0 flex-1 overflow-auto bg-white p-4 md:p-5`}>
        {selectedId ? (
          <button type="button" onClick={() => setSelectedId(null)} className="mb-3 text-sm text-slate-600 underline decoration-slate-300 md:hidden">
            ← All approvals
          </button>
        ) : null}
        {selectedId ? (
          <ApprovalDetail key={selectedId} ref={detailRef} approvalId={selectedId} placeholder={selectedItem} sessionLabel={sessionLabel} onDecided={onDecided} />
        ) : (
          <div className="flex h-full items-center justify-center">
            <p className="max-w-sm text-center text-sm text-slate-500">
              {items.length > 0 ? "Open an approval to see its arguments, reason and call chain, and to decide it. Press j to open the first." : "Nothing selected."}
            </p>
          </div>
        )}
      </section>
    </div>
  );
}
