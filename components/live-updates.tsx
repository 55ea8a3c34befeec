"use client";
// Live updates over socket.io: every event invalidates the cached queries it
// concerns, and a reconnect refetches everything so nothing pushed while the
// connection was down is missed.
import { useQueryClient } from "@tanstack/react-query";
import { createContext, useContext, useEffect, useState, type ReactNode } from "react";
import { io } from "socket.io-client";

export type ConnectionState = "connecting" | "live" | "lost";

const LiveContext = createContext<ConnectionState>("connecting");

export const useConnectionState = () => useContext(LiveContext);

const EVENTS = [
  "approval:requested",
  "approval:decided",
  "request:updated",
  "task:updated",
  "session:updated",
  "state:saved",
  "audit:appended",
] as const;

export function LiveUpdates({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [state, setState] = useState<ConnectionState>("connecting");

  useEffect(() => {
    const socket = io({ path: "/socket.io", withCredentials: true });
    let everConnected = false;
    socket.on("connect", () => {
      if (everConnected) void queryClient.invalidateQueries();
      everConnected = true;
      setState("live");
    });
    socket.on("disconnect", () => setState("lost"));
    socket.on("connect_error", () => setState("lost"));
    for (const name of EVENTS) {
      socket.on(name, () => void queryClient.invalidateQueries());
    }
    return () => {
      socket.disconnect();
    };
  }, [queryClient]);

  return <LiveContext.Provider value={state}>{children}</LiveContext.Provider>;
}
