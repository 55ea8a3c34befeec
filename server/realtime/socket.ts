// socket.io on the server's port: authenticates the operator (or an agent key)
// at the handshake, checks the Origin, and forwards bus events (small
// id-and-status signals) to the workspace's room, and each decision to the
// agent key that asked for it. Each node pushes to the sockets it holds, for
// its own events and those the event bridge brings from other nodes.
import type { Server as HttpServer, IncomingMessage } from "node:http";
import { parse as parseCookie } from "cookie";
import { Server } from "socket.io";
import type { AgentPrincipal, OperatorPrincipal } from "../domain/principal.ts";
import { EVENT_NAMES, type TollgateEvents } from "../events/bus.ts";
import { SESSION_COOKIE } from "../api/trpc.ts";
import { authenticateAgent, authenticateOperator } from "../services/auth.ts";
import type { ServiceDeps } from "../services/deps.ts";
import { releaseRunsOf } from "../services/runs/run-state.ts";
import { rooms } from "./rooms.ts";
import { API_SECURITY_HEADERS } from "../http-security.ts";

export interface RealtimeOptions {
  allowedOrigins: string[];
}

function originAllowed(req: IncomingMessage, allowedOrigins: string[]): boolean {
  const origin = req.headers.origin;
  // Non-browser clients send no Origin; they still need a valid token.
  if (!origin) return true;
  const host = req.headers.host;
  if (host && (origin === `http://${host}` || origin === `https://${host}`)) return true;
  return allowedOrigins.includes(origin);
}

export interface Realtime {
  io: Server;
  close(): Promise<void>;
}

export async function attachRealtime(httpServer: HttpServer, deps: ServiceDeps, options: RealtimeOptions): Promise<Realtime> {
  const io = new Server(httpServer, {
    path: "/socket.io",
    serveClient: false,
    // Next's dev server handles its own upgrades (HMR) on the same port.
    destroyUpgrade: false,
    allowRequest: (req, callback) => {
      const ok = originAllowed(req, options.allowedOrigins);
      callback(ok ? null : "origin not allowed", ok);
    },
  });

  // socket.io answers its own HTTP requests (long-polling): they carry the same headers as every other response.
  io.engine.on("headers", (headers: Record<string, string>) => Object.assign(headers, API_SECURITY_HEADERS));

  io.use(async (socket, next) => {
    // An agent's SDK holds one connection for the decisions of every approval it waits on.
    const agentKey = typeof socket.handshake.auth?.agentKey === "string" ? socket.handshake.auth.agentKey : undefined;
    if (agentKey) {
      const agent = await authenticateAgent(deps, agentKey).catch(() => null);
      if (!agent) return next(new Error("unauthorized: the agent key is unknown or revoked"));
      socket.data.agent = agent;
      return next();
    }
    const authToken = typeof socket.handshake.auth?.token === "string" ? socket.handshake.auth.token : undefined;
    const cookieHeader = socket.handshake.headers.cookie;
    const token = authToken ?? (cookieHeader ? parseCookie(cookieHeader)[SESSION_COOKIE] : undefined);
    const operator = token ? await authenticateOperator(deps, token).catch(() => null) : null;
    if (!operator) return next(new Error("unauthorized: log in to receive live updates"));
    socket.data.operator = operator;
    next();
  });

  io.on("connection", (socket) => {
    const holder = socket.data.agent ? "agent" : "operator";
    deps.metrics?.countHeldConnection(holder, 1);
    socket.on("disconnect", () => deps.metrics?.countHeldConnection(holder, -1));
    if (socket.data.agent) {
      const agent = socket.data.agent as AgentPrincipal;
      // Only its own decisions: never a workspace room, which carries everyone's events.
      void socket.join(rooms.agentKey(agent.agentKeyId));
      // The process that held this connection has gone (or lost its link): the
      // durable runs it drove may be taken over at once, not after their lease.
      const runHolder = typeof socket.handshake.auth?.holder === "string" ? socket.handshake.auth.holder : undefined;
      // Not when this server closed it: the agent lives on and connects to another node.
      if (runHolder) {
        socket.on("disconnect", (reason) => {
          if (reason === "server shutting down" || reason === "server namespace disconnect") return;
          void releaseRunsOf(deps, agent.agentKeyId, runHolder).catch(() => undefined);
        });
      }
      return;
    }
    const operator = socket.data.operator as OperatorPrincipal;
    void socket.join(rooms.workspace(operator.workspaceId));
    void socket.join(rooms.operatorSession(operator.sessionId));
    // The connection lives no longer than the session that opened it.
    const untilExpiry = Math.min(operator.expiresAt.getTime() - Date.now(), 2 ** 31 - 1);
    const expiry = setTimeout(() => socket.disconnect(true), Math.max(untilExpiry, 0));
    socket.on("disconnect", () => clearTimeout(expiry));
  });

  // Logged out or revoked: every node closes the connections it holds.
  const unsubscribeEnded = deps.bus.on("operator:session-ended", ({ sessionId }) => {
    io.in(rooms.operatorSession(sessionId)).disconnectSockets(true);
  });

  // A revoked agent key: every node closes the connections it holds for it.
  const unsubscribeRevoked = deps.bus.on("agent-key:changed", ({ agentKeyId, revoked }) => {
    if (revoked) io.in(rooms.agentKey(agentKeyId)).disconnectSockets(true);
  });

  // Events from other nodes may have been missed while the bridge was down: every client reads again.
  const unsubscribeResumed = deps.bus.on("bridge:resumed", () => void io.emit("resync"));

  const unsubscribers = EVENT_NAMES.map((name) =>
    deps.bus.on(name, (payload: TollgateEvents[typeof name]) => {
      const { workspaceId, ...rest } = payload as { workspaceId: string };
      io.to(rooms.workspace(workspaceId)).emit(name, rest);
    }),
  );

  // The decision itself, pushed to the key that asked (the payload is what approval.await answers).
  const unsubscribeDecisions = deps.bus.on("approval:decided", (event) => {
    // A decision too large for the link between nodes is not pushed from here:
    // the SDK's own reads find it, as they would a push lost in transit.
    if (!event.agentKeyId || event.decisionOmitted) return;
    const result = { approvalId: event.approvalId, status: event.status, ...(event.decision ? { decision: event.decision } : {}) };
    io.to(rooms.agentKey(event.agentKeyId)).emit("decision", result);
    deps.metrics?.countPush("socket");
  });

  return {
    io,
    async close() {
      for (const unsubscribe of unsubscribers) unsubscribe();
      unsubscribeDecisions();
      unsubscribeEnded();
      unsubscribeRevoked();
      unsubscribeResumed();
      await new Promise<void>((resolve) => io.close(() => resolve()));
    },
  };
}
