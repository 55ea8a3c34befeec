// How pending approvals are ordered. Most urgent first: what is asked of the
// viewer by name or group, then the soonest expiry, then the longest waiting.
import type { ApprovalItem } from "@/lib/types";

export type PendingSort = "urgent" | "newest";

export const SORT_LABEL: Record<PendingSort, string> = { urgent: "Most urgent first", newest: "Newest first" };

const time = (iso: string | null) => (iso ? new Date(iso).getTime() : Number.POSITIVE_INFINITY);

export function orderPending(items: readonly ApprovalItem[], sort: PendingSort): ApprovalItem[] {
  return [...items].sort((a, b) => {
    if (a.askedOfYou !== b.askedOfYou) return a.askedOfYou ? -1 : 1;
    if (sort === "newest") return time(b.createdAt) - time(a.createdAt);
    return time(a.expiresAt) - time(b.expiresAt) || time(a.createdAt) - time(b.createdAt);
  });
}
