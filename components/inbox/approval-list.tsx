"use client";
// The inbox's list of approvals, virtualized: only the rows in and around the
// viewport are rendered, so thousands of pending approvals stay fast. The row
// at the top of the viewport stays in place when newer approvals arrive above it.
import { useVirtualizer } from "@tanstack/react-virtual";
import { forwardRef, useImperativeHandle, useLayoutEffect, useRef, type ReactNode } from "react";
import type { ApprovalItem } from "@/lib/types";
import { HistoryRow, PendingRow, ROW_HEIGHT } from "./approval-rows";

export interface ApprovalListHandle {
  scrollToIndex(index: number): void;
}

interface ApprovalListProps {
  kind: "pending" | "history";
  items: ApprovalItem[];
  selectedId: string | null;
  checked: ReadonlySet<string>;
  /** Rows held in place that no longer wait (the list is pinned while one is open). */
  gone?: ReadonlySet<string>;
  /** Approvals whose decision waits in this page's outbox. */
  queued?: ReadonlySet<string>;
  checkable: boolean;
  dimmed: boolean;
  busy: boolean;
  sessionLabel(sessionId: string): string;
  onOpen(approvalId: string): void;
  onToggle(approvalId: string): void;
  /** Shown below the last row (History's "Load older decisions"). */
  footer?: ReactNode;
  /** Shown instead of the rows: loading, an error, or why the list is empty. */
  placeholder?: ReactNode;
}

const FOOTER_HEIGHT = 48;

export const ApprovalList = forwardRef<ApprovalListHandle, ApprovalListProps>(function ApprovalList(
  { kind, items, selectedId, checked, gone, queued, checkable, dimmed, busy, sessionLabel, onOpen, onToggle, footer, placeholder },
  ref,
) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    getItemKey: (index) => items[index]!.approvalId,
    overscan: 8,
  });
  useImperativeHandle(ref, () => ({ scrollToIndex: (index) => virtualizer.scrollToIndex(index, { align: "auto" }) }), [virtualizer]);

  // Keep the row at the top of the viewport in place when approvals arrive above it.
  const previousItems = useRef<ApprovalItem[]>([]);
  useLayoutEffect(() => {
    const list = scrollRef.current;
    const before = previousItems.current;
    previousItems.current = items;
    if (!list || list.scrollTop === 0 || before === items) return;
    const topIndex = Math.floor(list.scrollTop / ROW_HEIGHT);
    const anchor = before[topIndex];
    if (!anchor) return;
    const now = items.findIndex((item) => item.approvalId === anchor.approvalId);
    if (now >= 0 && now !== topIndex) list.scrollTop += (now - topIndex) * ROW_HEIGHT;
  }, [items]);

  const Row = kind === "pending" ? PendingRow : HistoryRow;
  return (
    <div ref={scrollRef} className={`relative min-h-0 flex-1 overflow-auto bg-slate-50 transition-opacity ${dimmed ? "opacity-50" : ""}`} aria-busy={busy}>
      {placeholder ? (
        <div className="p-4">{placeholder}</div>
      ) : (
        <div role="list" aria-label={kind === "pending" ? "Pending approvals" : "Decided approvals"} style={{ height: virtualizer.getTotalSize() + (footer ? FOOTER_HEIGHT : 0) }} className="relative">
          {virtualizer.getVirtualItems().map((row) => {
            const item = items[row.index]!;
            return (
              <div role="listitem" aria-setsize={items.length} aria-posinset={row.index + 1} key={row.key} style={{ position: "absolute", top: 0, left: 0, right: 0, transform: `translateY(${row.start}px)` }}>
                <Row
                  approval={item}
                  sessionLabel={sessionLabel(item.sessionId)}
                  current={item.approvalId === selectedId}
                  checked={checkable && checked.has(item.approvalId)}
                  gone={gone?.has(item.approvalId) ?? false}
                  queued={queued?.has(item.approvalId) ?? false}
                  checkable={checkable}
                  onOpen={onOpen}
                  onToggle={onToggle}
                />
              </div>
            );
          })}
          {footer ? <div className="absolute bottom-0 left-0 right-0 flex h-12 items-center justify-center">{footer}</div> : null}
        </div>
      )}
    </div>
  );
});
