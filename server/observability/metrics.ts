// Prometheus metrics of one node (prom-client): approvals waiting, decisions
// by outcome and by who decided, time to decision, API call and database
// statement durations, pushes to waiting agents, connections held, and the
// process's own (event-loop lag, memory, GC).
// Each server has its own registry, so several servers in one process (tests)
// do not share counters.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { EventBus } from "../events/bus.ts";
import type { ServiceDeps } from "../services/deps.ts";

export interface Metrics {
  registry: Registry;
  /** One API call answered: its procedure (or "unknown", "batch"), HTTP status and duration. */
  observeCall(procedure: string, status: number, seconds: number): void;
  /** A decision handed to a waiting agent: over its socket, a long-poll or the event stream. */
  countPush(channel: "socket" | "long-poll" | "stream"): void;
  /** A socket.io connection opened (1) or closed (-1) on this node, by who holds it. */
  countHeldConnection(holder: "agent" | "operator", change: 1 | -1): void;
  /** One statement sent to the database (see server/db/timed-adapter.ts). */
  observeStatement(kind: "query" | "execute", seconds: number, inTransaction: boolean): void;
  stop(): void;
}

// From a millisecond to a few seconds: where API calls and database round trips fall.
const CALL_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
// From an instant (a rule decided) to a day (a person on another continent).
const DECISION_BUCKETS = [0.01, 0.1, 1, 10, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600];

export function startMetrics(deps: Pick<ServiceDeps, "prisma">, bus: EventBus): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "tollgate_process_" });

  new Gauge({
    name: "tollgate_approvals_pending",
    help: "Approvals waiting for a decision, per workspace (the same on every node: read from the database at scrape time)",
    labelNames: ["workspace"],
    registers: [registry],
    async collect() {
      const rows = await deps.prisma.approval.groupBy({ by: ["workspaceId"], where: { status: "PENDING" }, _count: { _all: true } });
      this.reset();
      for (const row of rows) this.set({ workspace: row.workspaceId }, row._count._all);
    },
  });
  const decisions = new Counter({
    name: "tollgate_decisions_total",
    help: "Approvals decided on this node, by outcome and by who decided (operator, policy, timeout, system)",
    labelNames: ["status", "action", "decider"],
    registers: [registry],
  });
  const timeToDecision = new Histogram({
    name: "tollgate_time_to_decision_seconds",
    help: "From the agent's request to its decision, by who decided",
    labelNames: ["decider"],
    buckets: DECISION_BUCKETS,
    registers: [registry],
  });
  const calls = new Histogram({
    name: "tollgate_api_call_duration_seconds",
    help: "API calls answered by this node, by procedure and HTTP status: the time in Tollgate, database included",
    labelNames: ["procedure", "status"],
    buckets: CALL_BUCKETS,
    registers: [registry],
  });
  const statements = new Histogram({
    name: "tollgate_database_statement_duration_seconds",
    help: "Statements this node sent to the database, by kind (query: rows back; execute: a count back) and whether inside a transaction",
    labelNames: ["kind", "in_transaction"],
    buckets: CALL_BUCKETS,
    registers: [registry],
  });
  const pushes = new Counter({
    name: "tollgate_decision_pushes_total",
    help: "Decisions handed to waiting agents by this node, by channel",
    labelNames: ["channel"],
    registers: [registry],
  });

  const heldConnections = new Gauge({
    name: "tollgate_connections_held",
    help: "socket.io connections open on this node, by who holds them: agents' SDKs (their decisions are pushed on them) and operators' consoles",
    labelNames: ["holder"],
    registers: [registry],
  });
  for (const holder of ["agent", "operator"]) heldConnections.set({ holder }, 0);

  // Counted where the decision was made ("local"), so a deployment's sum counts each once.
  const unsubscribe = bus.on("approval:decided", (event, origin) => {
    if (origin !== "local") return;
    const decider = event.decision?.decider ?? "system";
    decisions.inc({ status: event.status, action: event.decision?.action ?? "none", decider });
    if (event.requestedAt && event.decision?.decidedAt) {
      timeToDecision.observe({ decider }, Math.max(0, (Date.parse(event.decision.decidedAt) - Date.parse(event.requestedAt)) / 1000));
    }
  });

  return {
    registry,
    observeCall: (procedure, status, seconds) => calls.observe({ procedure, status: String(status) }, seconds),
    countPush: (channel) => pushes.inc({ channel }),
    countHeldConnection: (holder, change) => heldConnections.inc({ holder }, change),
    observeStatement: (kind, seconds, inTransaction) => statements.observe({ kind, in_transaction: String(inTransaction) }, seconds),
    stop: unsubscribe,
  };
}
