// An operator who approves every approval asked for in one session, the
// moment its push arrives on their socket.
import type { Socket } from "socket.io-client";
import type { createTRPCClient } from "@trpc/client";
import type { AppRouter } from "../server/api/router.ts";

export interface BenchOperator {
  client: ReturnType<typeof createTRPCClient<AppRouter>>;
  socket: Socket;
}

/** Starts approving; returns the function that stops it. */
export function approveEachAsked(operator: BenchOperator, sessionId: string): () => void {
  const onRequested = (event: { approvalId: string; sessionId: string }) => {
    if (event.sessionId !== sessionId) return;
    void operator.client.approval.decide.mutate({ approvalId: event.approvalId, action: "approve" }).catch(() => undefined);
  };
  operator.socket.on("approval:requested", onRequested);
  return () => operator.socket.off("approval:requested", onRequested);
}
