"use client";
// What the inbox shows, kept in the URL so a view can be shared and survives a
// reload: the tab, the sort, the filters and the open approval.
import { debounce, parseAsString, parseAsStringLiteral, useQueryStates } from "nuqs";
import type { PendingSort } from "./pending-order";

export type InboxTab = "pending" | "history";

const TABS = ["pending", "history"] as const satisfies readonly InboxTab[];
const SORTS = ["urgent", "newest"] as const satisfies readonly PendingSort[];

const viewParsers = {
  tab: parseAsStringLiteral(TABS).withDefault("pending"),
  sort: parseAsStringLiteral(SORTS).withDefault("urgent"),
  session: parseAsString.withDefault(""),
  agent: parseAsString.withDefault(""),
  tool: parseAsString.withDefault(""),
  q: parseAsString.withDefault(""),
  approval: parseAsString,
};

export type InboxView = {
  tab: InboxTab;
  sort: PendingSort;
  session: string;
  agent: string;
  tool: string;
  /** Free text: arguments, session title, tool, agent, reason. */
  q: string;
  /** The open approval. */
  approval: string | null;
};

export const NO_FILTERS = { session: "", agent: "", tool: "", q: "" } as const;

export function useInboxView(): [InboxView, (change: Partial<InboxView>) => void] {
  const [view, setView] = useQueryStates(viewParsers, { history: "replace", clearOnDefault: true });
  return [
    view,
    // Typing in a filter rewrites the URL once the typing pauses, not per key.
    (change) => void setView(change, "agent" in change || "tool" in change || "q" in change ? { limitUrlUpdates: debounce(250) } : {}),
  ];
}
