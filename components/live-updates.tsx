"use client";
// Live updates over socket.io. An event about approvals reads just those
// approvals again and patches them into every cached list (a burst reads the
// lists whole instead); other events invalidate the queries they concern. Both
// are coalesced, so a burst of a thousand events costs a few requests, not a
// thousand, and a reconnect refetches everything so nothing pushed while the
// connection was down is missed.
import { useQueryClient, type InfiniteData, type QueryClient, type QueryKey } from "@tanstack/react-query";
import { createContext, useContext, useEffect, useState, type ReactNode } from "react";
import { io } from "socket.io-client";
import { useTRPC, useTRPCClient } from "@/lib/trpc";
import type { ApprovalItem } from "@/lib/types";
import { patchPages, type ListFilter, type ListPage } from "./inbox/list-patch";
import { alertNewApproval, type RequestedEvent } from "./desktop-alerts";

export type ConnectionState = "connecting" | "live" | "lost";

const LiveContext = createContext<ConnectionState>("connecting");

export const useConnectionState = () => useContext(LiveContext);

type Area = "approval" | "session" | "task" | "request" | "audit" | "state";

/** Events naming an approval: that approval is read again by id. */
const APPROVAL_EVENTS = ["approval:requested", "approval:decided", "approval:voted", "approval:executed"];

/** More approvals than this in one flush: the lists are read whole, once. */
const PATCH_LIMIT = 50;

const AREAS_BY_EVENT: Record<string, Area[]> = {
  "approval:requested": ["session", "task", "request"],
  "approval:decided": ["session", "task", "request"],
  "approval:executed": ["audit"],
  "request:updated": ["task", "request", "session"],
  "task:updated": ["task", "request", "session"],
  "session:updated": ["session"],
  "state:saved": ["state"],
  "audit:appended": ["audit"],
};

/** Refetches start at most this often while events keep arriving. */
const COALESCE_MS = 120;

type ListData = ListPage | InfiniteData<ListPage>;

/** Applies fresh approvals to every cached list and detail; lists it cannot patch are refetched. */
function applyApprovals(queryClient: QueryClient, listKey: QueryKey, detailKey: (approvalId: string) => QueryKey, fresh: ApprovalItem[]) {
  for (const item of fresh) queryClient.setQueryData(detailKey(item.approvalId), item);
  for (const [key, data] of queryClient.getQueriesData<ListData>({ queryKey: listKey })) {
    if (!data) continue;
    const filter = ((key[1] as { input?: ListFilter } | undefined)?.input ?? {}) as ListFilter;
    const pages = "pages" in data ? data.pages : [data];
    const patched = patchPages(pages, filter, fresh);
    if (!patched) void queryClient.invalidateQueries({ queryKey: key, exact: true }, { cancelRefetch: false });
    else {
      const next: ListData = "pages" in data ? { pages: patched, pageParams: data.pageParams } : patched[0]!;
      queryClient.setQueryData(key, next);
    }
  }
}

export function LiveUpdates({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const trpc = useTRPC();
  const client = useTRPCClient();
  const [state, setState] = useState<ConnectionState>("connecting");

  useEffect(() => {
    const keys: Record<Area, QueryKey> = {
      approval: trpc.approval.pathKey(),
      session: trpc.session.pathKey(),
      task: trpc.task.pathKey(),
      request: trpc.request.pathKey(),
      audit: trpc.audit.pathKey(),
      state: trpc.state.pathKey(),
    };
    const pending = new Set<Area>();
    const changedApprovals = new Set<string>();
    let readingApprovals = false;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const listKey = trpc.approval.list.pathKey();
    const detailKey = (approvalId: string) => trpc.approval.get.queryKey({ approvalId });
    const readApprovals = async (approvalIds: string[]) => {
      readingApprovals = true;
      try {
        const { items } = await client.approval.list.query({ approvalIds, limit: approvalIds.length });
        applyApprovals(queryClient, listKey, detailKey, items);
      } catch {
        void queryClient.invalidateQueries({ queryKey: trpc.approval.pathKey() }, { cancelRefetch: false });
      } finally {
        readingApprovals = false;
      }
    };
    const flush = () => {
      timer = null;
      if (changedApprovals.size > PATCH_LIMIT) {
        changedApprovals.clear();
        pending.add("approval");
      } else if (changedApprovals.size > 0 && !readingApprovals) {
        // One read at a time, in event order: a later read never loses to an earlier one.
        const approvalIds = [...changedApprovals];
        changedApprovals.clear();
        void readApprovals(approvalIds).then(() => {
          if (changedApprovals.size > 0) timer ??= setTimeout(flush, COALESCE_MS);
        });
      }
      for (const area of [...pending]) {
        // A fetch already in flight may have read before this event's commit: wait
        // for it to finish, then refetch. (Cancelling it instead would starve a slow
        // list of ever finishing under a steady stream of events.)
        if (queryClient.isFetching({ queryKey: keys[area] }) > 0) continue;
        pending.delete(area);
        void queryClient.invalidateQueries({ queryKey: keys[area] }, { cancelRefetch: false });
      }
      if (pending.size > 0) timer = setTimeout(flush, COALESCE_MS);
    };

    // WebSocket only: no HTTP long-polling fallback, so several server nodes behind a
    // load balancer need no sticky sessions.
    const socket = io({ path: "/socket.io", withCredentials: true, transports: ["websocket"] });
    let everConnected = false;
    let reconnectTimer: ReturnType<typeof setTimeout> | undefined;
    socket.on("connect", () => {
      if (everConnected) void queryClient.invalidateQueries();
      everConnected = true;
      setState("live");
    });
    // The server's link to its other nodes was down for a while: what they did meanwhile was not pushed.
    socket.on("resync", () => void queryClient.invalidateQueries());
    socket.on("disconnect", (reason) => {
      setState("lost");
      // The server closes a connection when its session ends (logout elsewhere,
      // revocation, expiry): check the session now, which sends the operator to
      // log in, and try again in case it was something else.
      if (reason === "io server disconnect") {
        void queryClient.invalidateQueries({ queryKey: trpc.auth.me.queryKey() });
        reconnectTimer = setTimeout(() => socket.connect(), 1_000);
      }
    });
    socket.on("connect_error", (error) => {
      setState("lost");
      // An expired session is refused at the handshake: let the shell notice and send the operator to log in.
      if (/unauthorized/i.test(error.message)) void queryClient.invalidateQueries({ queryKey: trpc.auth.me.queryKey() });
    });
    const stillPending = async (approvalId: string) => {
      const approval = await queryClient.fetchQuery(trpc.approval.get.queryOptions({ approvalId })).catch(() => null);
      return approval?.status === "PENDING";
    };
    // Expiry notices still armed in this tab, canceled when it closes.
    const alertTimers: Array<() => void> = [];
    socket.on("approval:requested", (event: RequestedEvent) => {
      const cancel = alertNewApproval(event, stillPending);
      if (cancel) alertTimers.push(cancel);
    });
    for (const name of APPROVAL_EVENTS) {
      socket.on(name, ({ approvalId }: { approvalId: string }) => {
        changedApprovals.add(approvalId);
        timer ??= setTimeout(flush, COALESCE_MS);
      });
    }
    for (const [name, areas] of Object.entries(AREAS_BY_EVENT)) {
      socket.on(name, () => {
        for (const area of areas) pending.add(area);
        timer ??= setTimeout(flush, COALESCE_MS);
      });
    }
    return () => {
      if (timer) clearTimeout(timer);
      clearTimeout(reconnectTimer);
      for (const cancel of alertTimers) cancel();
      socket.disconnect();
    };
  }, [queryClient, trpc, client]);

  return <LiveContext.Provider value={state}>{children}</LiveContext.Provider>;
}
