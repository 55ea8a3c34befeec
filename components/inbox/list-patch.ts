// Keeps cached approval lists true after a live event without refetching them:
// the approvals an event named are read again by id and put in, replaced in or
// taken out of every cached list they belong to. A list whose membership the
// console cannot decide alone (a free-text search over arguments and session
// titles) is refetched instead.
import type { ApprovalItem } from "@/lib/types";

export interface ListFilter {
  status?: string;
  sessionId?: string;
  agent?: string;
  tool?: string;
  text?: string;
  approvalIds?: string[];
  requestId?: string;
  batch?: string;
}

export interface ListPage {
  items: ApprovalItem[];
  nextCursor: string | null;
  total: number;
}

const containsFolded = (value: string, needle: string) => value.toLowerCase().includes(needle.toLowerCase());

/** Whether `item` belongs in the list of `filter`, or null when only the server can tell. */
export function belongsTo(item: ApprovalItem, filter: ListFilter): boolean | null {
  if (filter.text?.trim() || filter.approvalIds) return null;
  if (filter.status === "DECIDED" ? item.status === "PENDING" : filter.status !== undefined && item.status !== filter.status) return false;
  if (filter.sessionId && item.sessionId !== filter.sessionId) return false;
  if (filter.requestId && item.requestId !== filter.requestId) return false;
  if (filter.batch && item.batch !== filter.batch) return false;
  if (filter.agent && !containsFolded(item.agent, filter.agent)) return false;
  if (filter.tool && !containsFolded(item.tool, filter.tool)) return false;
  return true;
}

/**
 * The pages of one cached list with the fresh items applied, or null when the
 * list must be refetched. A new member goes first on the first page (the
 * newest; the console orders pending ones itself); a member already listed is
 * replaced where it is; one that no longer belongs is taken out.
 */
export function patchPages(pages: readonly ListPage[], filter: ListFilter, fresh: readonly ApprovalItem[]): ListPage[] | null {
  if (pages.length === 0) return [...pages];
  const next = pages.map((page) => ({ ...page, items: [...page.items] }));
  let totalChange = 0;
  for (const item of fresh) {
    const member = belongsTo(item, filter);
    if (member === null) return null;
    const pageIndex = next.findIndex((page) => page.items.some((existing) => existing.approvalId === item.approvalId));
    const page = next[pageIndex];
    const index = page ? page.items.findIndex((existing) => existing.approvalId === item.approvalId) : -1;
    if (member && page) page.items[index] = item;
    else if (member) {
      next[0]!.items.unshift(item);
      totalChange += 1;
    } else if (page) {
      page.items.splice(index, 1);
      totalChange -= 1;
    }
  }
  return next.map((page) => ({ ...page, total: page.total + totalChange }));
}
