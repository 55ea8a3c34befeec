"use client";
// The approval inbox, the console's landing page: pending approvals most urgent
// first (or newest first), live; a detail panel to decide; keyboard shortcuts;
// bulk decisions; filters; and the history of decided approvals. On a phone it
// shows the list, then the open approval with a way back.
import { keepPreviousData, useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { sessionLabels } from "@/lib/session-labels";
import { useTRPC } from "@/lib/trpc";
import type { ApprovalItem, DecisionAction } from "@/lib/types";
import { canDecide, useOperator } from "../app-shell";
import { isWaiting, useOutbox } from "../decision-toasts";
import { Empty, ErrorNote, Loading } from "../ui";
import { ApprovalDetail } from "./approval-detail";
import { ApprovalList, type ApprovalListHandle } from "./approval-list";
import { BulkActions } from "./bulk-actions";
import type { DecisionPanelHandle } from "./decision-panel";
import { InboxFilters, isFiltered } from "./inbox-filters";
import { orderPending } from "./pending-order";
import { pinnedList } from "./pinned-list";
import { useInboxKeys, useShortcutsSetting } from "./use-inbox-keys";
import { useInboxView, type InboxTab } from "./use-inbox-view";

const PENDING_LIMIT = 2000;
const HISTORY_PAGE = 200;
// Live events patch the list; this refresh keeps "is anyone waiting" current.
const PENDING_REFRESH_MS = 30_000;
const DONE_VERB: Record<DecisionAction, string> = { approve: "approved", reject: "rejected", edit: "approved with edits", respond: "answered" };

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
  const operator = useOperator();
  const decider = canDecide(operator);
  const [view, setView] = useInboxView();
  const { tab, approval: selectedId } = view;
  const [shortcuts, setShortcuts] = useShortcutsSetting();
  const [checked, setChecked] = useState<Set<string>>(() => new Set());
  const [status, setStatus] = useState("");
  const detailRef = useRef<DecisionPanelHandle>(null);
  const listRef = useRef<ApprovalListHandle>(null);
  const lastIndex = useRef(0);

  const agent = useDebounced(view.agent.trim(), 250);
  const tool = useDebounced(view.tool.trim(), 250);
  const text = useDebounced(view.q.trim(), 300);
  const serverFilter = { ...(view.session ? { sessionId: view.session } : {}), ...(agent ? { agent } : {}), ...(tool ? { tool } : {}), ...(text ? { text } : {}) };

  const sessions = useQuery(trpc.session.list.queryOptions({ limit: 1000 }, { staleTime: 30_000 }));
  const sessionTitles = useMemo(() => sessionLabels(sessions.data?.items ?? []), [sessions.data]);
  const sessionLabel = useCallback((id: string) => sessionTitles.get(id) ?? "", [sessionTitles]);

  const pending = useQuery({
    ...trpc.approval.list.queryOptions({ status: "PENDING", limit: PENDING_LIMIT, ...serverFilter }),
    placeholderData: keepPreviousData,
    refetchInterval: PENDING_REFRESH_MS,
  });
  const history = useInfiniteQuery({
    ...trpc.approval.list.infiniteQueryOptions(
      { status: "DECIDED", limit: HISTORY_PAGE, ...serverFilter },
      { getNextPageParam: (last) => last.nextCursor ?? undefined },
    ),
    enabled: tab === "history",
    placeholderData: keepPreviousData,
  });

  const livePending = useMemo(() => (pending.data ? orderPending(pending.data.items, view.sort) : undefined), [pending.data, view.sort]);
  // While an approval is open, the pending list holds still (see pinned-list.ts); opening
  // another one, or changing the view, lets it take its new order.
  const pinKey = tab === "pending" && selectedId ? JSON.stringify([selectedId, view.sort, view.session, agent, tool, text]) : null;
  const [pin, setPin] = useState<{ key: string; items: ApprovalItem[] } | null>(null);
  // Pinned only once the list read is the one for this view (not the last view's, kept while it loads).
  const settledList = pending.isPlaceholderData ? undefined : livePending;
  if (pinKey && settledList && pin?.key !== pinKey) setPin({ key: pinKey, items: settledList });
  const pinned = useMemo(() => (pinKey && pin?.key === pinKey && settledList ? pinnedList(pin.items, settledList) : null), [pinKey, pin, settledList]);
  const pendingItems = pinned?.items ?? livePending;
  const historyItems = useMemo(() => history.data?.pages.flatMap((page) => page.items) ?? [], [history.data]);
  const items: ApprovalItem[] = (tab === "pending" ? pendingItems : historyItems) ?? [];
  const outbox = useOutbox();
  const queuedIds = useMemo(() => new Set(outbox.filter(isWaiting).map((entry) => entry.approvalId)), [outbox]);
  const selectedIndex = selectedId ? items.findIndex((item) => item.approvalId === selectedId) : -1;
  if (selectedIndex >= 0) lastIndex.current = selectedIndex;
  const selectedItem = selectedIndex >= 0 ? items[selectedIndex] : undefined;

  // Names seen so far, suggested in the agent and tool filters.
  const suggestions = useMemo(() => {
    const all = [...(pendingItems ?? []), ...historyItems];
    return { agents: [...new Set(all.map((item) => item.agent))].sort(), tools: [...new Set(all.map((item) => item.tool))].sort() };
  }, [pendingItems, historyItems]);

  // Checked ids that are still pending (decided ones drop out of the selection).
  const checkedPending = useMemo(() => (livePending ?? []).filter((item) => checked.has(item.approvalId)), [livePending, checked]);

  const open = useCallback((id: string | null) => setView({ approval: id }), [setView]);
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
      open(items[index]!.approvalId);
      listRef.current?.scrollToIndex(index);
    },
    [items, selectedIndex, selectedId, open],
  );

  const keyActions = useMemo(
    () => ({
      move,
      approve: (startedAt: number) => detailRef.current?.approve(startedAt),
      reject: (startedAt: number) => detailRef.current?.open("reject", startedAt),
      edit: (startedAt: number) => detailRef.current?.open("edit", startedAt),
      ...(tab === "pending" && decider ? { toggleSelected: () => selectedId && toggle(selectedId) } : {}),
    }),
    [move, tab, decider, selectedId, toggle],
  );
  useInboxKeys(shortcuts, keyActions);

  const onDecided = useCallback(() => {
    // Auto-advance: the next approval still waiting opens (below, else above); with
    // none left, the decided one stays open with its outcome.
    if (tab !== "pending" || selectedIndex < 0) return;
    const waiting = (item: ApprovalItem | undefined) => item && item.approvalId !== selectedId && !pinned?.gone.has(item.approvalId) && !queuedIds.has(item.approvalId);
    const next = items.slice(selectedIndex + 1).find(waiting) ?? items.slice(0, selectedIndex).reverse().find(waiting);
    if (next) open(next.approvalId);
  }, [selectedIndex, selectedId, items, tab, open, pinned, queuedIds]);

  // The list may have taken its new order: keep the open approval in view, once
  // for each approval opened, as soon as its row is in the list (an approval
  // opened from a link is found only once the list has loaded).
  const scrolledTo = useRef<string | null>(null);
  useEffect(() => {
    if (selectedIndex < 0 || scrolledTo.current === selectedId) return;
    scrolledTo.current = selectedId;
    listRef.current?.scrollToIndex(selectedIndex);
  }, [selectedId, selectedIndex]);

  // The footer says what became of each decision once it is sent.
  const reported = useRef(new Set<string>());
  useEffect(() => {
    for (const entry of outbox) {
      const id = `${entry.approvalId}:${entry.dueAt}:${entry.state}`;
      if (reported.current.has(id)) continue;
      reported.current.add(id);
      if (entry.state === "sent") setStatus(`You ${DONE_VERB[entry.input.action]} ${entry.subject}.`);
      // Taken back, or refused by the server (invalid arguments, say): it is open again to decide.
      if ((entry.state === "undone" || entry.state === "failed") && tab === "pending") open(entry.approvalId);
    }
  }, [outbox, tab, open]);

  const activeQuery = tab === "pending" ? pending : history;
  const filtered = isFiltered(view);
  const placeholder = activeQuery.isPending ? (
    <Loading>Loading approvals…</Loading>
  ) : activeQuery.error ? (
    <ErrorNote title="Could not load approvals" error={activeQuery.error} />
  ) : items.length === 0 ? (
    <Empty>
      {filtered
        ? "No approvals match these filters. Clear the filters to see all."
        : tab === "pending"
          ? "No approvals are waiting. New requests appear here the moment an agent asks."
          : "No decided approvals yet."}
    </Empty>
  ) : null;

  const tabButton = (value: InboxTab, label: string) => (
    <button
      type="button"
      role="tab"
      aria-selected={tab === value}
      onClick={() => setView({ tab: value, approval: null })}
      className={`rounded-t px-3 py-2 text-sm font-medium ${tab === value ? "border-b-2 border-slate-900 text-slate-900" : "text-slate-500 hover:text-slate-900"}`}
    >
      {label}
    </button>
  );

  return (
    <div className="flex h-full min-h-0">
      <section aria-label="Approvals" className={`${selectedId ? "hidden md:flex" : "flex"} w-full min-w-0 flex-col border-r border-slate-200 md:w-[56%] md:min-w-[24rem]`}>
        <div className="flex items-end justify-between border-b border-slate-200 bg-white px-3">
          <div role="tablist" aria-label="Inbox views" className="flex gap-1">
            {tabButton("pending", `Pending (${pendingItems ? (pending.data?.total ?? pendingItems.length) : "…"})`)}
            {tabButton("history", "History")}
          </div>
          <h1 className="sr-only">Approval inbox</h1>
        </div>

        <InboxFilters view={view} onChange={setView} sessions={sessions.data?.items ?? []} suggestions={suggestions} />

        {tab === "pending" && decider ? <BulkActions selected={checkedPending} shown={items} onSelect={setChecked} onOpen={open} onStatus={setStatus} /> : null}

        <ApprovalList
          ref={listRef}
          kind={tab}
          items={items}
          selectedId={selectedId}
          checked={checked}
          gone={pinned?.gone}
          queued={queuedIds}
          checkable={tab === "pending" && decider}
          dimmed={activeQuery.isPlaceholderData}
          busy={activeQuery.isFetching}
          sessionLabel={sessionLabel}
          onOpen={open}
          onToggle={toggle}
          placeholder={placeholder}
          footer={
            tab === "history" && history.hasNextPage ? (
              <button type="button" disabled={history.isFetchingNextPage} onClick={() => void history.fetchNextPage()} className="rounded border border-slate-300 bg-white px-3 py-1 text-sm">
                {history.isFetchingNextPage ? "Loading…" : "Load older decisions"}
              </button>
            ) : undefined
          }
        />

        <footer className="flex h-9 shrink-0 items-center justify-between gap-4 border-t border-slate-200 bg-white px-3 text-xs text-slate-600">
          <div className="flex min-w-0 items-center gap-3">
            {pinned && pinned.arrived > 0 ? (
              // Down here, not above the list: announcing them must not move the rows either.
              <p role="status" data-testid="new-arrivals" className="flex shrink-0 items-center gap-2 font-medium text-sky-900">
                <span title="They arrived while this approval is open; the list keeps its order until you move on">
                  {pinned.arrived} new<span className="hidden xl:inline"> since you opened this one</span>
                </span>
                <button type="button" onClick={() => setPin({ key: pinKey!, items: livePending! })} className="rounded border border-sky-300 bg-sky-50 px-2 py-0.5 hover:bg-sky-100">
                  Show them
                </button>
              </p>
            ) : null}
            <p role="status" aria-live="polite" data-testid="inbox-status" className="truncate font-medium text-slate-900">
              {status}
            </p>
          </div>
          <div className="flex shrink-0 items-center gap-3">
            {shortcuts && tab === "pending" && decider ? (
              <p aria-label="Keyboard shortcuts" className="hidden lg:block">
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

      <section aria-label="Approval detail" className={`${selectedId ? "block" : "hidden md:block"} min-w-0 flex-1 overflow-auto bg-white px-4 pt-4 md:px-5 md:pt-5`}>
        {selectedId ? (
          <>
            <button type="button" onClick={() => open(null)} className="mb-3 text-sm text-slate-600 underline decoration-slate-300 md:hidden">
              ← All approvals
            </button>
            <ApprovalDetail key={selectedId} ref={detailRef} approvalId={selectedId} placeholder={pinned?.gone.has(selectedId) ? undefined : selectedItem} sessionLabel={sessionLabel} onDecided={onDecided} />
          </>
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
