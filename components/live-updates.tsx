"use client";
// Live updates over socket.io: each event invalidates the queries it concerns
// (coalesced, so a burst of a thousand events costs a few refetches, not a
// thousand), and a reconnect refetches everything so nothing pushed while the
// connection was down is missed.
import { useQueryClient, type QueryKey } from "@tanstack/react-query";
import { createContext, useContext, useEffect, useState, type ReactNode } from "react";
import { io } from "socket.io-client";
import { useTRPC } from "@/lib/trpc";
import { alertNewApproval, type RequestedEvent } from "./desktop-alerts";

export type ConnectionState = "connecting" | "live" | "lost";

const LiveContext = createContext<ConnectionState>("connecting");

export const useConnectionState = () => useContext(LiveContext);

type Area = "approval" | "session" | "task" | "request" | "audit" | "state";

const AREAS_BY_EVENT: Record<string, Area[]> = {
  "approval:requested": ["approval", "session", "task", "request"],
  "approval:decided": ["approval", "session", "task", "request"],
  "approval:voted": ["approval"],
  "approval:executed": ["approval", "audit"],
  "request:updated": ["task", "request", "session"],
  "task:updated": ["task", "request", "session"],
  "session:updated": ["session"],
  "state:saved": ["state"],
  "audit:appended": ["audit"],
};

/** Refetches start at most this often while events keep arriving. */
const COALESCE_MS = 120;

export function LiveUpdates({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const trpc = useTRPC();
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
    let timer: ReturnType<typeof setTimeout> | null = null;
    const flush = () => {
      timer = null;
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
  }, [queryClient, trpc]);

  return <LiveContext.Provider value={state}>{children}</LiveContext.Provider>;
}
