// The pending list while an approval is open holds still: rows keep their places,
// approvals that arrive meanwhile are counted (and announced) instead of being
// put in, and approvals that stopped waiting stay where they were, marked. The
// list takes its new order when the operator moves on.
import type { ApprovalItem } from "@/lib/types";

export interface PinnedList {
  items: ApprovalItem[];
  /** Shown rows that are no longer pending (decided, expired or canceled elsewhere). */
  gone: ReadonlySet<string>;
  /** Pending approvals not shown yet. */
  arrived: number;
}

/** The rows as pinned, each with its fresh data where it still has some. */
export function pinnedList(pinned: readonly ApprovalItem[], fresh: readonly ApprovalItem[]): PinnedList {
  const byId = new Map(fresh.map((item) => [item.approvalId, item]));
  const gone = new Set<string>();
  const items = pinned.map((item) => {
    const current = byId.get(item.approvalId);
    if (!current) gone.add(item.approvalId);
    return current ?? item;
  });
  const shown = new Set(pinned.map((item) => item.approvalId));
  const arrived = fresh.filter((item) => !shown.has(item.approvalId)).length;
  return { items, gone, arrived };
}
