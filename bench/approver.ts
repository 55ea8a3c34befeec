// The benchmark's operator: logged in over HTTP with the console's socket
// open, and one who approves every approval asked for in one session, the
// moment its push arrives on their socket.
import { io, type Socket } from "socket.io-client";
import { createTRPCClient, httpLink } from "@trpc/client";
import { undiciFetch } from "./undici-fetch.ts";
import type { AppRouter } from "../server/api/router.ts";
import type { BenchServer } from "./server.ts";

export interface BenchOperator {
  client: ReturnType<typeof createTRPCClient<AppRouter>>;
  socket: Socket;
}

/** The server's admin, logged in, with the console's socket connected. */
export async function connectOperator(server: Pick<BenchServer, "url" | "admin">): Promise<BenchOperator & { close(): void }> {
  const login = await fetch(`${server.url}/api/trpc/auth.login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: server.admin.email, password: server.admin.password }),
  });
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
  const client = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${server.url}/api/trpc`, headers: { cookie, origin: new URL(server.url).origin }, fetch: undiciFetch })] });
  const token = cookie.split("=")[1]!;
  const socket = io(server.url, { path: "/socket.io", auth: { token }, transports: ["websocket"] });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("connect_error", reject);
  });
  return { client, socket, close: () => socket.close() };
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
