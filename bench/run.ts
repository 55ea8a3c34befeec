// npm run bench: measures the engine's targets against a Tollgate server in a
// separate process (real HTTP and socket.io), on the embedded database and on
// PostgreSQL, then one node against two on PostgreSQL with Redis between them
// (when Redis answers at BENCH_REDIS_URL, default redis://127.0.0.1:6379), and
// writes bench/results.md with the machine's size. BENCH_ONLY=cluster measures
// only the nodes, into bench/results-cluster.md; BENCH_ONLY=memory only prints
// the server's memory after BENCH_MEMORY_APPROVALS approvals,
// BENCH_ONLY=depth-3 only the depth-3 round trip against LangGraph's, and
// BENCH_ONLY=transport only begin + complete through the SDK's transport
// against tRPC's client.
import { writeFile } from "node:fs/promises";
import os from "node:os";
import { createEmptyPostgresDatabase, type ThrowawayDatabase } from "../test/databases.ts";
import type { Socket } from "socket.io-client";
import { createTollgate } from "../sdk/src/index.ts";
import { percentile, spread } from "./stats.ts";
import { startBenchServer, type BenchServer } from "./server.ts";
import { benchThreadState } from "./thread-state.ts";
import { autoApproved, autoApprovedRate, evaluationMicros, loadHundredRules } from "./policies.ts";
import { burst } from "./burst.ts";
import { callCosts, type CallCost } from "./calls.ts";
import { langGraphRoundTrips, langGraphSampler } from "./langgraph.ts";
import { memoryAfterApprovals, type MemoryResult } from "./memory.ts";
import { BLOCK, interleaved } from "./interleave.ts";
import { transportAgainstTrpcClient } from "./transport.ts";
import { connectOperator } from "./approver.ts";
import { askSteadily } from "./steady-load.ts";
import { WARM_UP_SECONDS, warmUp } from "./warm-up.ts";

/** --quick: one run of fewer samples, no memory figure, for development; its file says so. */
const QUICK = process.argv.includes("--quick");
const RUNS = Number(process.env.BENCH_RUNS ?? (QUICK ? 1 : 3));
const ROUND_TRIPS = Number(process.env.BENCH_ROUND_TRIPS ?? (QUICK ? 100 : 300));
const SUSTAINED_SECONDS = Number(process.env.BENCH_SUSTAINED_SECONDS ?? (QUICK ? 3 : 8));
const SUSTAINED_WARM_UP_SECONDS = Number(process.env.BENCH_SUSTAINED_WARM_UP_SECONDS ?? 2);
const MEMORY_APPROVALS = Number(process.env.BENCH_MEMORY_APPROVALS ?? (QUICK ? 0 : 10_000));
/** A run longer than this stops, writing the databases it finished. */
const DEADLINE_MINUTES = Number(process.env.BENCH_DEADLINE_MINUTES ?? 40);
const runStarted = performance.now();
const loads = [os.loadavg()[0]!];
setInterval(() => loads.push(os.loadavg()[0]!), 5_000).unref();
const now = () => performance.now();

type Operator = Awaited<ReturnType<typeof connectOperator>>;

/** Resolves when the socket sees an event matching `match`. */
function nextEvent<T>(socket: Socket, name: string, match: (payload: T) => boolean): Promise<T> {
  return new Promise((resolve) => {
    const listener = (payload: T) => {
      if (!match(payload)) return;
      socket.off(name, listener);
      resolve(payload);
    };
    socket.on(name, listener);
  });
}

/**
 * The agent asks, the operator's socket hears it, the operator decides, the
 * agent's wait answers. With depth > 1 the asking request is the leaf of a
 * call chain that deep, so every caller above it pauses and resumes too.
 */
async function roundTrips(server: BenchServer, operator: Operator, count: number, depth = 1): Promise<number[]> {
  const roundTrip = await roundTripSampler(server, operator, depth);
  try {
    const samples: number[] = [];
    for (let i = 0; i < count; i++) samples.push(await roundTrip.sample(i));
    return samples;
  } finally {
    roundTrip.close();
  }
}

/** One round trip at a time, from a request `depth` deep: each sample's milliseconds. */
async function roundTripSampler(server: BenchServer, operator: Operator, depth: number) {
  const sdk = createTollgate({ url: server.url, apiKey: server.agentKey });
  const { sessionId } = await sdk.openSession({ title: "bench: round trips" });
  let request = await sdk.begin({ sessionId, agent: "bench-agent" });
  for (let level = 1; level < depth; level++) request = await sdk.begin({ sessionId, agent: `bench-agent-${level}`, parentRequestId: request.requestId });
  return {
    async sample(i: number): Promise<number> {
      const started = now();
      const requested = nextEvent<{ approvalId: string }>(operator.socket, "approval:requested", () => true);
      // The SDK's own wait: the decision is pushed on the connection it holds.
      const answered = sdk.ask({ requestId: request.requestId, tool: "send_email", args: { i } });
      const pushed = await requested;
      await operator.client.approval.decide.mutate({ approvalId: pushed.approvalId, action: "approve" });
      const result = await answered;
      if (result.status !== "APPROVED") throw new Error(`round trip ${i} ended ${result.status}`);
      return now() - started;
    },
    close: () => sdk.close(),
  };
}

/**
 * Tollgate's depth-3 round trip and LangGraph's depth-3 cascade (its SQLite
 * checkpointer, in this process), `count` of each, in alternating blocks: the
 * ratio of their medians is a target, and on a machine whose speed drifts
 * from minute to minute, each side measured at its own time moved it by more
 * than a fifth between two runs. Interleaved, both see the machine as it is.
 */
async function depthThreeAgainstLangGraph(server: BenchServer, operator: Operator, count: number) {
  const tollgate = await roundTripSampler(server, operator, 3);
  const langGraph = await langGraphSampler(3, "sqlite");
  try {
    const [ours, theirs] = await interleaved(count, (i) => tollgate.sample(i), () => langGraph.sample());
    return { tollgate: ours, langGraph: theirs };
  } finally {
    tollgate.close();
    await langGraph.close();
  }
}

/** request.begin then request.complete through the SDK, one pair after another: each pair's milliseconds. */
async function beginAndCompletePairs(server: BenchServer, count: number): Promise<number[]> {
  const sdk = createTollgate({ url: server.url, apiKey: server.agentKey });
  const { sessionId } = await sdk.openSession({ title: "bench: begin and complete" });
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = now();
    const request = await sdk.begin({ sessionId, agent: "bench-agent" });
    await request.complete({ ok: true });
    samples.push(now() - started);
  }
  sdk.close();
  return samples;
}

async function cascade(server: BenchServer, operator: Operator, depth: number) {
  const sdk = createTollgate({ url: server.url, apiKey: server.agentKey });
  // Closed after: an open client's held connection hears every decision of its agent key, the later loads' too.
  try {
    const { sessionId } = await sdk.openSession({ title: `bench: cascade ${depth}` });
    const ids: string[] = [];
    let parent: string | undefined;
    for (let level = 0; level < depth; level++) {
      const begun = await sdk.begin({ sessionId, agent: `level-${level}`, parentRequestId: parent });
      ids.push(begun.requestId);
      parent = begun.requestId;
    }
    const statuses = new Map(ids.map((id) => [id, "RUNNING"]));
    const reached = (status: string) =>
      new Promise<void>((resolve) => {
        const listener = (event: { requestId: string; status: string }) => {
          if (!statuses.has(event.requestId)) return;
          statuses.set(event.requestId, event.status);
          if ([...statuses.values()].every((value) => value === status)) {
            operator.socket.off("request:updated", listener);
            resolve();
          }
        };
        operator.socket.on("request:updated", listener);
      });
    const paused = reached("PAUSED");
    const started = now();
    const asked = await sdk.call("approval.request", { requestId: parent!, tool: "rm", args: {} });
    await paused;
    const pausedMs = now() - started;
    const running = reached("RUNNING");
    const resumeStarted = now();
    await operator.client.approval.decide.mutate({ approvalId: asked.approvalId, action: "approve" });
    await running;
    return { pausedMs, resumedMs: now() - resumeStarted };
  } finally {
    sdk.close();
  }
}

/**
 * Agents spread over `servers` ask and wait as fast as they can; the first
 * operator's socket hears every request (from every node) and the operators
 * decide in turn, each through its own node. The agents' requests are begun
 * before the clock starts, and the same load runs for
 * SUSTAINED_WARM_UP_SECONDS first, so the rate is the steady one, not the
 * begins' and the JIT's first seconds. Lost and duplicated decisions are
 * counted over the warm-up too.
 */
async function sustained(servers: BenchServer[], operators: Operator[], agents: number, seconds: number) {
  const sdks = servers.map((server) => createTollgate({ url: server.url, apiKey: server.agentKey }));
  const sdk = sdks[0]!;
  const operator = operators[0]!;
  const { sessionId } = await sdk.openSession({ title: "bench: sustained" });
  const decidedBy = new Map<string, number>();
  let turn = 0;
  const onRequested = (event: { approvalId: string }) => {
    decidedBy.set(event.approvalId, (decidedBy.get(event.approvalId) ?? 0) + 1);
    const decider = operators[turn++ % operators.length]!;
    void decider.client.approval.decide.mutate({ approvalId: event.approvalId, action: "approve" }).catch(() => undefined);
  };
  operator.socket.on("approval:requested", onRequested);
  const requests = await Promise.all(Array.from({ length: agents }, (_, agentIndex) => sdks[agentIndex % sdks.length]!.begin({ sessionId, agent: `agent-${agentIndex}` })));
  let lost = 0;
  let duplicated = 0;
  const seen = new Set<string>();
  const { warmUp, measured, elapsedSeconds } = await askSteadily(
    requests.map((request, agentIndex) => () => sdks[agentIndex % sdks.length]!.ask({ requestId: request.requestId, tool: "t", args: { agentIndex } })),
    SUSTAINED_WARM_UP_SECONDS,
    seconds,
    // A round trip is an approval received once; anything else is lost or duplicated.
    (answer) => {
      if (answer.status !== "APPROVED") lost += 1;
      else if (seen.has(answer.approvalId)) duplicated += 1;
      else {
        seen.add(answer.approvalId);
        return true;
      }
      return false;
    },
  );
  operator.socket.off("approval:requested", onRequested);
  for (const each of sdks) each.close();
  const audited = await operator.client.audit.list.query({ action: "approval.decided", limit: 1000 });
  const decidedTwice = [...decidedBy.values()].filter((count) => count > 1).length;
  return { perSecond: measured / elapsedSeconds, completed: warmUp + measured, lost, duplicated: duplicated + decidedTwice, auditedSample: audited.items.length };
}

async function traceIngest(server: BenchServer, seconds: number) {
  // No held connection: it waits for no decision, and an open one would hear every decision of the key.
  const sdk = createTollgate({ url: server.url, apiKey: server.agentKey, push: false });
  const { sessionId } = await sdk.openSession({ title: "bench: trace" });
  const request = await sdk.begin({ sessionId, agent: "tracer" });
  const batch = Array.from({ length: 100 }, (_, i) => ({ type: "tool_call", name: "search", data: { query: `q${i}`, page: i } }));
  const deadline = now() + seconds * 1000;
  const started = now();
  let events = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (now() < deadline) {
        // Read after the await: `events += await ...` would add to the total as it was before the call and lose the other writers' events.
        const { accepted } = await request.trace(batch);
        events += accepted;
      }
    }),
  );
  return events / ((now() - started) / 1000);
}

interface TargetResults {
  label: string;
  rtP50: number[];
  rtP99: number[];
  depth: Record<number, { paused: number[]; resumed: number[] }>;
  sustained: { perSecond: number; completed: number; lost: number; duplicated: number }[];
  trace: number[];
  stateSave: number[];
  stateDiff: number[];
  beginAndCompleteP50: number[];
  /** begin + complete p50 through the SDK's transport and through tRPC's client, interleaved. */
  transportP50: { sdk: number[]; trpcClient: number[] };
  rules100P50: number[];
  rules100P99: number[];
  autoApprovedP50: number[];
  autoApprovedRate: number[];
  evaluationUs: number[];
  depth3P50: number[];
  /** LangGraph with its SQLite checkpointer (durable), the comparison. */
  langGraphDepth1P50: number[];
  langGraphDepth3P50: number[];
  /** LangGraph with its MemorySaver, which keeps nothing. */
  langGraphInMemoryDepth1P50: number[];
  langGraphInMemoryDepth3P50: number[];
  burstFirst: number[];
  burstLast: number[];
  calls: CallCost[][];
  /** Measured once per database (the first run): it takes minutes. */
  memory: MemoryResult[];
}

async function measure(label: string, databaseUrl?: string): Promise<TargetResults> {
  const results: TargetResults = { label, rtP50: [], rtP99: [], depth: { 1: { paused: [], resumed: [] }, 5: { paused: [], resumed: [] }, 10: { paused: [], resumed: [] } }, sustained: [], trace: [], stateSave: [], stateDiff: [], beginAndCompleteP50: [], transportP50: { sdk: [], trpcClient: [] }, rules100P50: [], rules100P99: [], autoApprovedP50: [], autoApprovedRate: [], evaluationUs: [], depth3P50: [], langGraphDepth1P50: [], langGraphDepth3P50: [], langGraphInMemoryDepth1P50: [], langGraphInMemoryDepth3P50: [], burstFirst: [], burstLast: [], calls: [], memory: [] };
  for (let run = 1; run <= RUNS; run++) {
    const server = await startBenchServer(databaseUrl);
    const operator = await connectOperator(server);
    try {
      await warmUp(server, operator);
      const samples = await roundTrips(server, operator, ROUND_TRIPS);
      results.rtP50.push(percentile(samples, 50));
      results.rtP99.push(percentile(samples, 99));
      for (const depth of [1, 5, 10]) {
        const repeats = [];
        for (let i = 0; i < 15; i++) repeats.push(await cascade(server, operator, depth));
        results.depth[depth]!.paused.push(percentile(repeats.map((r) => r.pausedMs), 50));
        results.depth[depth]!.resumed.push(percentile(repeats.map((r) => r.resumedMs), 50));
      }
      results.sustained.push(await sustained([server], [operator], 100, SUSTAINED_SECONDS));
      // The same pause and resume in process with LangGraph.js, interleaved with Tollgate's.
      const depthThree = await depthThreeAgainstLangGraph(server, operator, ROUND_TRIPS);
      results.depth3P50.push(percentile(depthThree.tollgate, 50));
      results.langGraphDepth3P50.push(percentile(depthThree.langGraph, 50));
    } finally {
      operator.close();
      await server.stop();
    }
    // LangGraph's other figures, in the same run.
    results.langGraphDepth1P50.push(percentile(await langGraphRoundTrips(1, ROUND_TRIPS, "sqlite"), 50));
    results.langGraphInMemoryDepth1P50.push(percentile(await langGraphRoundTrips(1, ROUND_TRIPS, "memory"), 50));
    results.langGraphInMemoryDepth3P50.push(percentile(await langGraphRoundTrips(3, ROUND_TRIPS, "memory"), 50));
    // A burst of agents on a server that has just started.
    const cold = await startBenchServer(databaseUrl);
    try {
      const operator = await connectOperator(cold);
      try {
        const result = await burst(cold, operator, 100);
        results.burstFirst.push(result.firstMs);
        results.burstLast.push(result.lastMs);
      } finally {
        operator.close();
      }
    } finally {
      await cold.stop();
    }
    if (run === 1 && MEMORY_APPROVALS > 0) {
      const busy = await startBenchServer(databaseUrl);
      try {
        const operator = await connectOperator(busy);
        try {
          results.memory.push(await memoryAfterApprovals(busy, operator, MEMORY_APPROVALS));
          const memory = results.memory.at(-1)!;
          console.log(`${label}: ${memory.approvals} approvals in ${memory.seconds.toFixed(0)} s; server resident ${memory.residentUnderLoadMb.toFixed(0)} MB as the load ends, ${memory.residentMb.toFixed(0)} MB after quiet, heap used ${memory.heapUsedMb.toFixed(0)} MB`);
        } finally {
          operator.close();
        }
      } finally {
        await busy.stop();
      }
    }
    // Ingest and thread state on a server of their own, not behind the load test's backlog.
    const fresh = await startBenchServer(databaseUrl);
    try {
      results.trace.push(await traceIngest(fresh, 4));
      const thread = await benchThreadState(fresh);
      results.stateSave.push(thread.save.p50Ms);
      results.stateDiff.push(thread.diff.p50Ms);
      // Policies: the same round trip with 100 rules to walk past, and a call a rule approves.
      const operator = await connectOperator(fresh);
      try {
        await warmUp(fresh, operator);
        results.beginAndCompleteP50.push(percentile(await beginAndCompletePairs(fresh, ROUND_TRIPS), 50));
        const transport = await transportAgainstTrpcClient(fresh, ROUND_TRIPS);
        results.transportP50.sdk.push(percentile(transport.sdk, 50));
        results.transportP50.trpcClient.push(percentile(transport.trpcClient, 50));
        results.calls.push(await callCosts(fresh, operator.client, 100));
        await loadHundredRules(operator.client);
        await roundTrips(fresh, operator, 30);
        const samples = await roundTrips(fresh, operator, ROUND_TRIPS);
        results.rules100P50.push(percentile(samples, 50));
        results.rules100P99.push(percentile(samples, 99));
        results.autoApprovedP50.push(await autoApproved(fresh.url, fresh.agentKey, ROUND_TRIPS));
        results.autoApprovedRate.push(await autoApprovedRate(fresh.url, fresh.agentKey, 100, SUSTAINED_SECONDS));
        results.evaluationUs.push(evaluationMicros());
      } finally {
        operator.close();
      }
      console.log(`${label} run ${run}/${RUNS}: round trip p50 ${results.rtP50.at(-1)!.toFixed(2)} ms, p99 ${results.rtP99.at(-1)!.toFixed(2)} ms, begin + complete p50 ${results.beginAndCompleteP50.at(-1)!.toFixed(2)} ms, sustained ${results.sustained.at(-1)!.perSecond.toFixed(0)}/s, trace ${results.trace.at(-1)!.toFixed(0)}/s, with 100 rules p50 ${results.rules100P50.at(-1)!.toFixed(2)} ms, auto-approved p50 ${results.autoApprovedP50.at(-1)!.toFixed(2)} ms and ${results.autoApprovedRate.at(-1)!.toFixed(0)}/s with 100 agents, 100 rules evaluated in ${results.evaluationUs.at(-1)!.toFixed(1)} µs, depth 3 p50 ${results.depth3P50.at(-1)!.toFixed(2)} ms (LangGraph with SQLite ${results.langGraphDepth3P50.at(-1)!.toFixed(2)} ms), burst first/last ${results.burstFirst.at(-1)!.toFixed(0)}/${results.burstLast.at(-1)!.toFixed(0)} ms`);
    } finally {
      await fresh.stop();
    }
  }
  return results;
}

interface ClusterResults {
  nodes: number;
  rtP50: number[];
  rtP99: number[];
  sustained: { perSecond: number; completed: number; lost: number; duplicated: number }[];
}

/**
 * One node against two on one PostgreSQL, with Redis between them. The round
 * trip crosses nodes when there are two: the agent asks and waits on the
 * second node, the operator hears it and decides on the first.
 */
async function measureCluster(databaseUrl: string, redisUrl: string): Promise<ClusterResults[]> {
  const results: ClusterResults[] = [1, 2].map((nodes) => ({ nodes, rtP50: [], rtP99: [], sustained: [] }));
  const env = { REDIS_URL: redisUrl, TOLLGATE_SECRET: `bench-cluster-secret-${"c".repeat(32)}` };
  for (let run = 1; run <= RUNS; run++) {
    for (const result of results) {
      const nodes: BenchServer[] = [];
      for (let index = 0; index < result.nodes; index++) nodes.push(await startBenchServer(databaseUrl, { reset: index === 0, env }));
      const operators = await Promise.all(nodes.map(connectOperator));
      try {
        await roundTrips(nodes.at(-1)!, operators[0]!, 30);
        const samples = await roundTrips(nodes.at(-1)!, operators[0]!, ROUND_TRIPS);
        result.rtP50.push(percentile(samples, 50));
        result.rtP99.push(percentile(samples, 99));
        result.sustained.push(await sustained(nodes, operators, 100, SUSTAINED_SECONDS));
        console.log(`PostgreSQL, ${result.nodes} node(s), run ${run}/${RUNS}: round trip p50 ${result.rtP50.at(-1)!.toFixed(2)} ms, sustained with 100 agents ${result.sustained.at(-1)!.perSecond.toFixed(0)}/s`);
      } finally {
        for (const operator of operators) operator.close();
        for (const node of nodes) await node.stop();
      }
    }
  }
  return results;
}

function clusterReport(results: ClusterResults[]): string {
  const [one, two] = results as [ClusterResults, ClusterResults];
  const rate = (result: ClusterResults) => spread(result.sustained.map((s) => s.perSecond), 0);
  const lostAndDuplicated = (result: ClusterResults) =>
    `${result.sustained.reduce((n, s) => n + s.lost, 0)} / ${result.sustained.reduce((n, s) => n + s.duplicated, 0)} of ${result.sustained.reduce((n, s) => n + s.completed, 0)}`;
  return [
    "## Several nodes (PostgreSQL, Redis between the nodes)",
    "",
    "Each node is its own process on this machine. With two nodes the round trip crosses them: the agent asks and waits on one node, the operator's socket hears it through Redis and the decision is made on the other. In the sustained run 100 agents are spread over the nodes and decisions alternate between them.",
    "",
    "| figure | one node | two nodes |",
    "|---|---|---|",
    `| approval round trip p50 (ms) | ${spread(one.rtP50, 2)} | ${spread(two.rtP50, 2)} |`,
    `| approval round trip p99 (ms) | ${spread(one.rtP99, 2)} | ${spread(two.rtP99, 2)} |`,
    `| sustained round trips/s, 100 concurrent agents | ${rate(one)} | ${rate(two)} |`,
    `| lost / duplicated decisions (all runs) | ${lostAndDuplicated(one)} | ${lostAndDuplicated(two)} |`,
    "",
  ].join("\n");
}

async function redisReachable(url: string): Promise<boolean> {
  const { createClient } = await import("redis");
  const client = createClient({ url, socket: { connectTimeout: 2_000, reconnectStrategy: false } });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch {
    return false;
  } finally {
    await client.quit().catch(() => undefined);
  }
}

async function postgresUrl(): Promise<ThrowawayDatabase | null> {
  const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://root@127.0.0.1:5432/postgres";
  return createEmptyPostgresDatabase(adminUrl, "tollgate_bench").catch(() => null);
}

function verdict(ok: boolean) {
  return ok ? "met" : "**missed**";
}

function report(targets: TargetResults[], cluster: string, extra: string): string {
  const lines: string[] = [];
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  lines.push(`# Benchmark results${QUICK ? " (--quick: a development run, not the figures)" : ""}`, "");
  const sortedLoads = [...loads].sort((a, b) => a - b);
  lines.push(`Machine: ${os.cpus().length} cores (${cpu}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB memory, Node ${process.version}, ${os.platform()} ${os.release()}. Load average (1 minute) during the run, sampled every 5 s: ${sortedLoads[0]!.toFixed(1)} at least, ${sortedLoads[Math.floor(sortedLoads.length / 2)]!.toFixed(1)} median, ${sortedLoads.at(-1)!.toFixed(1)} at most; the run took ${((performance.now() - runStarted) / 60_000).toFixed(1)} minutes.`);
  lines.push(`Measured ${new Date().toISOString()} with \`npm run bench\`: the server runs in its own process; clients talk real HTTP and socket.io over loopback.`);
  lines.push(`Each figure is the median over ${RUNS} runs on a fresh database, with the range (min–max) across runs in parentheses. The per-call figures are a running server's: they follow ${WARM_UP_SECONDS} s of warm-up, begin, ask, decide and complete one after another on the same server (LangGraph's pause and resume warms up as long; see bench/warm-up.ts), and the burst is measured on a server that has just started. Round trips: ${ROUND_TRIPS} per run, and at depth 3 in blocks of ${BLOCK} alternating with as many of LangGraph's depth-3 cascades, on the same machine at the same time; sustained: ${SUSTAINED_SECONDS} s with 100 agents whose requests were begun first, after ${SUSTAINED_WARM_UP_SECONDS} s of the same load; cascades: median of 15 per depth per run. Targets are issue 9's; the server's memory is measured once per database, in the first run; the deadlock count is not measured here (deadlocks: test/lock-order.test.ts).`, "");
  for (const target of targets) {
    const embedded = target.label.startsWith("embedded");
    const medianOf = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const row = (figure: string, result: string, target = "") => lines.push(`| ${figure} | ${result} | ${target} |`);
    const goal = (text: string, ok: boolean) => `${text} — ${verdict(ok)}`;
    lines.push(`## ${target.label}`, "");
    lines.push("| figure | result | target |", "|---|---|---|");
    row("approval round trip p50 (ms)", spread(target.rtP50, 2), goal("≤ 5", medianOf(target.rtP50) <= 5));
    row("approval round trip p99 (ms)", spread(target.rtP99, 2), goal("≤ 20", medianOf(target.rtP99) <= 20));
    row("request.begin + request.complete p50, one pair after another through the SDK (ms)", spread(target.beginAndCompleteP50, 2), goal("≤ 2", medianOf(target.beginAndCompleteP50) <= 2));
    row("the same pair sent by the SDK's transport / by tRPC's client over the same HTTP, interleaved, p50 (ms)", `${spread(target.transportP50.sdk, 2)} / ${spread(target.transportP50.trpcClient, 2)}`);
    row("auto-approved approval.request (a rule decides), p50 (ms)", spread(target.autoApprovedP50, 2), goal("≤ 2", medianOf(target.autoApprovedP50) <= 2));
    row("auto-approved approval.request, 100 agents at once: calls/s", spread(target.autoApprovedRate, 0));
    const perSecond = target.sustained.map((s) => s.perSecond);
    const rateGoal = embedded ? 250 : 500;
    row("sustained round trips/s, 100 concurrent agents", spread(perSecond, 0), goal(`≥ ${rateGoal}`, medianOf(perSecond) >= rateGoal));
    row("lost / duplicated decisions (all runs)", `${target.sustained.reduce((n, s) => n + s.lost, 0)} / ${target.sustained.reduce((n, s) => n + s.duplicated, 0)} of ${target.sustained.reduce((n, s) => n + s.completed, 0)}`, "0 / 0");
    const ratio = medianOf(target.depth3P50) / medianOf(target.langGraphDepth3P50);
    row("depth-3 cascade round trip p50 (ms)", spread(target.depth3P50, 2));
    row("LangGraph.js in process, same run, SQLite checkpointer on a file: pause and resume p50, depth 1 / depth 3 (ms)", `${spread(target.langGraphDepth1P50, 2)} / ${spread(target.langGraphDepth3P50, 2)}`);
    row("depth-3 round trip ÷ LangGraph's depth-3 cascade (SQLite)", ratio.toFixed(2), goal("< 1", ratio < 1));
    const inMemoryRatio = medianOf(target.depth3P50) / medianOf(target.langGraphInMemoryDepth3P50);
    row("LangGraph.js with its in-memory checkpointer (keeps nothing): depth 1 / depth 3 (ms), and the depth-3 ratio", `${spread(target.langGraphInMemoryDepth1P50, 2)} / ${spread(target.langGraphInMemoryDepth3P50, 2)}; ${inMemoryRatio.toFixed(2)}`);
    row("100-agent burst: first / last decision received (ms)", `${spread(target.burstFirst, 0)} / ${spread(target.burstLast, 0)}`, goal("< 1,000 / < 2,000", medianOf(target.burstFirst) < 1000 && medianOf(target.burstLast) < 2000));
    row("trace events ingested/s (batches of 100, 4 writers)", spread(target.trace, 0), goal("≥ 20,000", medianOf(target.trace) >= 20000));
    for (const memory of target.memory) {
      row(
        `server memory after ${memory.approvals.toLocaleString("en")} approvals (100 agents, ${memory.seconds.toFixed(0)} s), resident: as the load ends / 60 s later (heap in use then), MB`,
        `${memory.residentUnderLoadMb.toFixed(0)} / ${memory.residentMb.toFixed(0)} (${memory.heapUsedMb.toFixed(0)})`,
        goal("≤ 300 (60 s later)", memory.residentMb <= 300),
      );
    }
    for (const depth of [1, 5, 10]) {
      row(`cascade depth ${depth}: until root PAUSED / until all RUNNING (ms)`, `${spread(target.depth[depth]!.paused, 2)} / ${spread(target.depth[depth]!.resumed, 2)}`);
    }
    const ratioPaused = medianOf(target.depth[10]!.paused) / medianOf(target.depth[1]!.paused);
    const ratioResumed = medianOf(target.depth[10]!.resumed) / medianOf(target.depth[1]!.resumed);
    row("depth 10 ÷ depth 1 (pause / resume)", `${ratioPaused.toFixed(2)} / ${ratioResumed.toFixed(2)}`, goal("≤ 2", ratioPaused <= 2 && ratioResumed <= 2));
    row("state.save of a 100 KB state, p50 (ms)", spread(target.stateSave, 1), goal("≤ 20", medianOf(target.stateSave) <= 20));
    row("state.diff between two 1 MB versions, p50 (ms)", spread(target.stateDiff, 1), goal("≤ 100", medianOf(target.stateDiff) <= 100));
    row("approval round trip with 100 policy rules loaded, p50 / p99 (ms)", `${spread(target.rules100P50, 2)} / ${spread(target.rules100P99, 2)}`);
    row("evaluating 100 rules in process, p50 (µs)", spread(target.evaluationUs, 1), goal("≤ 1,000", medianOf(target.evaluationUs) <= 1000));
    lines.push("");
    lines.push(`Where one call's time goes (${target.label}): p50 and mean from the client; statements sent and the driver's time on them, per call, and the server's time from the request's arrival to the response's end, all read from the server's \`/metrics\` (BEGIN and COMMIT are not counted as statements). The server's time less the database's is HTTP parsing, tRPC, authentication and the use case's own code; the client's mean less the server's is the client and the loopback. All but the p50 are means. Each call here is sent between two reads of \`/metrics\`, which the server answers in between, so these calls cost more than the same calls one after another (request.begin + request.complete in the table above).`, "");
    lines.push("| call | p50 at the client (ms) | mean (ms) | statements | in the database (ms) | in the server outside the database (ms) | client and loopback (ms) |", "|---|---|---|---|---|---|---|");
    for (const call of target.calls[0]!.map((first) => first.call)) {
      const runs = target.calls.map((calls) => calls.find((cost) => cost.call === call)!);
      const p50 = medianOf(runs.map((cost) => cost.p50Ms));
      const database = medianOf(runs.map((cost) => cost.databaseMs));
      const server = medianOf(runs.map((cost) => cost.serverMs));
      const inServer = server > 0 ? (server - database).toFixed(2) : "—";
      const mean = medianOf(runs.map((cost) => cost.meanMs));
      const outside = (mean - server).toFixed(2);
      lines.push(`| ${call} | ${p50.toFixed(2)} | ${mean.toFixed(2)} | ${medianOf(runs.map((cost) => cost.statements)).toFixed(1)} | ${database.toFixed(2)} | ${inServer} | ${outside} |`);
    }
    lines.push("");
  }
  if (cluster) lines.push(cluster, "");
  lines.push(extra);
  return lines.join("\n") + "\n";
}

const only = process.env.BENCH_ONLY;
/** One figure alone, on the embedded database and on PostgreSQL, each on a server of its own; printed, not written. */
async function printOnEachDatabase(figure: (server: BenchServer, operator: Operator) => Promise<string>): Promise<never> {
  const postgres = await postgresUrl();
  for (const [label, url] of [["embedded (PGlite)", undefined], ["PostgreSQL", postgres?.url]] as const) {
    if (label === "PostgreSQL" && !url) continue;
    const server = await startBenchServer(url);
    const operator = await connectOperator(server);
    try {
      console.log(`${label}: ${await figure(server, operator)}`);
    } finally {
      operator.close();
      await server.stop();
    }
  }
  await postgres?.drop();
  process.exit(0);
}

if (only === "depth-3") {
  // The depth-3 round trip against LangGraph's depth-3 cascade, interleaved, after the warm-up.
  await printOnEachDatabase(async (server, operator) => {
    await warmUp(server, operator);
    const { tollgate, langGraph } = await depthThreeAgainstLangGraph(server, operator, ROUND_TRIPS);
    const [ours, theirs] = [percentile(tollgate, 50), percentile(langGraph, 50)];
    return `depth-3 round trip p50 ${ours.toFixed(2)} ms, LangGraph's depth-3 cascade ${theirs.toFixed(2)} ms, ratio ${(ours / theirs).toFixed(2)}`;
  });
}
if (only === "transport") {
  // begin + complete through the SDK's transport against tRPC's client, interleaved, after the warm-up.
  await printOnEachDatabase(async (server, operator) => {
    await warmUp(server, operator);
    const { sdk, trpcClient } = await transportAgainstTrpcClient(server, 1_000);
    const [ours, theirs] = [percentile(sdk, 50), percentile(trpcClient, 50)];
    return `begin + complete p50 through the SDK's transport ${ours.toFixed(2)} ms, through tRPC's client ${theirs.toFixed(2)} ms (${((1 - ours / theirs) * 100).toFixed(0)} % less)`;
  });
}
if (only === "memory") {
  // The server's memory after BENCH_MEMORY_APPROVALS approvals.
  await printOnEachDatabase(async (server, operator) => {
    const memory = await memoryAfterApprovals(server, operator, MEMORY_APPROVALS);
    return `${memory.approvals} approvals in ${memory.seconds.toFixed(0)} s; server resident ${memory.residentUnderLoadMb.toFixed(0)} MB as the load ends, ${memory.residentMb.toFixed(0)} MB after quiet, heap used ${memory.heapUsedMb.toFixed(0)} MB`;
  });
}
const resultsFile = only === "cluster" ? "bench/results-cluster.md" : "bench/results.md";
const targets: TargetResults[] = [];
// The bound: what finished is written, and the file says where the run stopped.
setTimeout(() => {
  void writeFile(resultsFile, report(targets, "", `**The run stopped at its ${DEADLINE_MINUTES}-minute bound (BENCH_DEADLINE_MINUTES)**; the databases above finished, the rest was not measured.\n`)).then(() => {
    console.log(`bench: stopped at the ${DEADLINE_MINUTES}-minute bound; what finished is written to ${resultsFile}`);
    process.exit(1);
  });
}, DEADLINE_MINUTES * 60_000).unref();
if (only !== "cluster") targets.push(await measure("embedded (PGlite)"));
const postgres = await postgresUrl();
const redisUrl = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
let cluster = "";
if (postgres) {
  try {
    if (only !== "cluster") targets.push(await measure("PostgreSQL", postgres.url));
    if (await redisReachable(redisUrl)) cluster = clusterReport(await measureCluster(postgres.url, redisUrl));
    else console.log(`Redis is not reachable at ${redisUrl}; the several-nodes figures are left out`);
  } finally {
    await postgres.drop();
  }
} else {
  console.log("PostgreSQL is not reachable; measuring the embedded database only");
}
const reading = "Where the time goes, and what was tried: docs/performance.md.";
await writeFile(resultsFile, report(targets, cluster, reading));
console.log(`bench: results written to ${resultsFile}`);
process.exit(0);
