// Every client side by side, as users run them: the SDK (its decision pushed on
// the held socket), plain HTTP (approval.request, then the approval.await
// long-poll, as curl or any language does it) and the Python client, against
// LangGraph.js's own in-process pause and resume, on a server with the console
// on (the default) and on one with it off. All samplers run in one process, in
// interleaved blocks of 25 whose order rotates, so a machine whose speed drifts
// slows all alike; each ratio is the median over the blocks of the block
// medians' ratio. Then full agent loops (begin, ask, wait, complete) of 100
// agents at once, console on and off in alternating rounds beside LangGraph's
// 100 threads pausing and resuming, and a burst of 100 plain-HTTP agents
// asking together. On the embedded database, then on PostgreSQL when it answers.
// Beside each load's rate: the CPU per loop of the server, of its PostgreSQL
// backends and of this process (the load generator), how busy the server's
// main thread was and the cores the three kept busy, so a reader sees which
// of them, or the machine's other work, bounded the rate.
//
//   npm run bench:clients                     # whole run, about 6 minutes
//   npm run bench:clients -- --quick          # 3 blocks, short loops: for development
//   BENCH_DATABASES=embedded npm run bench:clients
//
// PostgreSQL: BENCH_DATABASE_URL, else TEST_DATABASE_URL, else
// postgres://root@127.0.0.1:5432/postgres (two throwaway databases are made
// there, one per server). A run longer than BENCH_DEADLINE_MINUTES (12) stops,
// writing what it measured and where it stopped. Writes
// bench/results-clients.md (the machine's size, the load average during the
// run) and prints it.
import { spawn, spawnSync, execFileSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { createInterface } from "node:readline";
import { createTollgate } from "../sdk/src/index.ts";
import { createEmptyPostgresDatabase, type ThrowawayDatabase } from "../test/databases.ts";
import { postgresTemplate } from "../test/templates.ts";
import { approveEveryAsk, askOverHttp, loopingAgents, plainCall, type LoopKind } from "./agent-loops.ts";
import { connectOperator, type BenchOperator } from "./approver.ts";
import { BLOCK } from "./interleave.ts";
import { langGraphSampler } from "./langgraph.ts";
import { startBenchServer, type BenchServer } from "./server.ts";
import { cpuWindow, type LoopCpu } from "./process-cpu.ts";
import { percentile } from "./stats.ts";
import { warmUp } from "./warm-up.ts";

const QUICK = process.argv.includes("--quick");
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? (QUICK ? 3 : 8));
const LOOP_SECONDS = Number(process.env.BENCH_LOOP_SECONDS ?? (QUICK ? 3 : 8));
/** Rounds of the loads, console on and off alternating within each. */
const LOOP_ROUNDS = Number(process.env.BENCH_LOOP_ROUNDS ?? (QUICK ? 1 : 2));
const SERVER_WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? (QUICK ? 3 : 8));
const DEADLINE_MINUTES = Number(process.env.BENCH_DEADLINE_MINUTES ?? 12);
const DATABASES = (process.env.BENCH_DATABASES ?? "embedded,postgres").split(",");
const AGENTS = 100;
const now = () => performance.now();
const median = (values: number[]) => percentile(values, 50);

type Sampler = { name: string; sample(i: number): Promise<number>; close?(): Promise<void> | void };

/** A round trip of each sampler, BLOCKS blocks of BLOCK each, the order rotating every block. */
async function interleavedBlocks(samplers: Sampler[]): Promise<number[][][]> {
  const blocks: number[][][] = samplers.map(() => []);
  for (let block = 0; block < BLOCKS; block++) {
    const order = samplers.map((_, index) => (index + block) % samplers.length);
    for (const index of order) {
      const samples: number[] = [];
      for (let i = 0; i < BLOCK; i++) samples.push(await samplers[index]!.sample(block * BLOCK + i));
      blocks[index]!.push(samples);
    }
  }
  return blocks;
}

/** The median over blocks of (block median of a) / (block median of b). */
function blockRatio(a: number[][], b: number[][]): number {
  return median(a.map((block, index) => median(block) / median(b[index]!)));
}

/** The operator: hears each ask on the console's socket and decides over HTTP. */
async function operatorOf(server: BenchServer) {
  const operator = await connectOperator(server);
  const heard = new Map<string, (approvalId: string) => void>();
  operator.socket.on("approval:requested", (event: { approvalId: string; requestId: string }) => {
    const waiting = heard.get(event.requestId);
    if (waiting) {
      heard.delete(event.requestId);
      waiting(event.approvalId);
    }
  });
  return {
    operator,
    /** Resolves with the approval asked on this request, once the console's socket has it. */
    hears: (requestId: string) => new Promise<string>((resolve) => heard.set(requestId, resolve)),
    decide: (approvalId: string) => operator.client.approval.decide.mutate({ approvalId, action: "approve" }),
  };
}

async function sdkSampler(name: string, server: BenchServer, console: Awaited<ReturnType<typeof operatorOf>>): Promise<Sampler> {
  const sdk = createTollgate({ url: server.url, apiKey: server.agentKey });
  const { sessionId } = await sdk.openSession({ title: `bench: ${name}` });
  const { requestId } = await sdk.begin({ sessionId, agent: "sdk-agent" });
  return {
    name,
    async sample(i) {
      const started = now();
      const heard = console.hears(requestId);
      const answered = sdk.ask({ requestId, tool: "send_email", args: { i } });
      await console.decide(await heard);
      if ((await answered).status !== "APPROVED") throw new Error("the SDK's round trip was not approved");
      return now() - started;
    },
    close: () => sdk.close(),
  };
}

async function plainHttpSampler(name: string, server: BenchServer, console: Awaited<ReturnType<typeof operatorOf>>): Promise<Sampler> {
  const http = plainCall(server);
  const { sessionId } = await http.mutate<{ sessionId: string }>("session.open", { title: `bench: ${name}` });
  const { requestId } = await http.mutate<{ requestId: string }>("request.begin", { sessionId, agent: "http-agent" });
  return {
    name,
    async sample(i) {
      const started = now();
      const heard = console.hears(requestId);
      const answered = askOverHttp(http, requestId, { i });
      await console.decide(await heard);
      if ((await answered).status !== "APPROVED") throw new Error("the plain-HTTP round trip was not approved");
      return now() - started;
    },
  };
}

/** The Python client in a process of its own: each line in starts one round trip, each line out is its milliseconds. */
const PYTHON_AGENT = `
import sys, time
sys.path.insert(0, "clients/python")
from tollgate import Tollgate
client = Tollgate(sys.argv[1], sys.argv[2])
session_id = client.open_session(title="bench: Python")
request_id = client.begin(session_id, "python-agent")["requestId"]
print(request_id, flush=True)
for line in sys.stdin:
    started = time.perf_counter()
    asked = client.request_approval(request_id, "send_email", {"i": int(line)})
    result = client.wait_for_decision(asked["approvalId"]) if asked["status"] == "PENDING" else asked
    assert result["status"] == "APPROVED", result
    print((time.perf_counter() - started) * 1000, flush=True)
`;

async function pythonSampler(server: BenchServer, console: Awaited<ReturnType<typeof operatorOf>>): Promise<Sampler> {
  const child: ChildProcessWithoutNullStreams = spawn("python3", ["-c", PYTHON_AGENT, server.url, server.agentKey]);
  children.add(child);
  child.stderr.pipe(process.stderr);
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const nextLine = async () => {
    const line = await lines.next();
    if (line.done) throw new Error("the Python agent stopped");
    return line.value;
  };
  const requestId = await nextLine();
  return {
    name: "Python client",
    async sample(i) {
      const heard = console.hears(requestId);
      child.stdin.write(`${i}\n`);
      await console.decide(await heard);
      return Number(await nextLine());
    },
    close: () => {
      child.kill();
      children.delete(child);
    },
  };
}

async function langGraphFlat(): Promise<Sampler> {
  const langGraph = await langGraphSampler(1, "sqlite");
  return { name: "LangGraph (SQLite, in process)", sample: () => langGraph.sample(), close: () => langGraph.close() };
}

/** Loops still running this long after a load's end are abandoned, and the load says so. */
const STRAGGLER_SECONDS = 30;
let stragglers = 0;

/** A load's rate, and what each side spent on it (LangGraph has no server: its CPU is all this process's). */
interface LoadFigures {
  loopsPerSecond: number;
  cpu: LoopCpu;
}

/**
 * `AGENTS` loops at once of `loop`, for a warm-up and then LOOP_SECONDS: loops
 * a second and the CPU per loop over the timed window of this process (the
 * agents and the operator) and, given the server, of its process, its main
 * thread and its PostgreSQL backends.
 */
async function loadFigures(loop: (agent: number) => Promise<void>, server?: BenchServer): Promise<LoadFigures> {
  const runUntil = async (deadline: number) => {
    let loops = 0;
    let running = AGENTS;
    const all = Promise.all(
      Array.from({ length: AGENTS }, async (_, agent) => {
        while (now() < deadline) {
          await loop(agent);
          loops += 1;
        }
        running -= 1;
      }),
    );
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, deadline - now() + STRAGGLER_SECONDS * 1000)));
    await Promise.race([all, bound]);
    clearTimeout(timer);
    if (running > 0) {
      stragglers += running;
      progress(`${running} loops still waiting ${STRAGGLER_SECONDS} s after the load's end: left behind`);
    }
    return loops;
  };
  await runUntil(now() + Math.min(2, LOOP_SECONDS) * 1000);
  const window = cpuWindow(server);
  const loops = await runUntil(now() + LOOP_SECONDS * 1000);
  const cpu = window.end(loops);
  return { loopsPerSecond: loops / (cpu.wallMs / 1000), cpu };
}

/** The cores a load kept busy: its CPU per loop on every side times loops a second. */
function coresBusy({ loopsPerSecond, cpu }: LoadFigures): number {
  return ((cpu.serverMsPerLoop ?? 0) + (cpu.postgresMsPerLoop ?? 0) + cpu.generatorMsPerLoop) * loopsPerSecond / 1000;
}

/**
 * For each load that missed its rate: what bounded it in this run, read off
 * its own figures (the server's main thread, the machine's cores, or neither),
 * and what the target would need. Where that time goes inside the server and
 * PostgreSQL is from profiles, in docs/performance.md.
 */
function whereTheTimeGoes(missed: [string, LoadFigures[], number][]): string[] {
  const lines: string[] = [];
  const cores = availableParallelism();
  for (const [name, runs, target] of missed) {
    // The round the table shows as the median (the lower of two).
    const middle = [...runs].sort((a, b) => a.loopsPerSecond - b.loopsPerSecond)[Math.floor((runs.length - 1) / 2)];
    if (!middle || middle.loopsPerSecond >= target) continue;
    const { cpu, loopsPerSecond } = middle;
    const mainThreadMs = cpu.serverMainThreadBusy === undefined ? undefined : (cpu.serverMainThreadBusy * 1000) / loopsPerSecond;
    const busy = coresBusy(middle);
    const perLoopMs = (cpu.serverMsPerLoop ?? 0) + (cpu.postgresMsPerLoop ?? 0) + cpu.generatorMsPerLoop;
    let bound: string;
    if (cpu.serverMainThreadBusy !== undefined && cpu.serverMainThreadBusy >= 0.85) {
      bound = `the server's main thread (busy ${fmt(cpu.serverMainThreadBusy)}): it spent ${fmt(mainThreadMs!)} ms a loop, and ${target} loops a second leave it ${fmt(1000 / target)}`;
    } else if (busy >= 0.8 * cores) {
      bound = `the machine's ${cores} cores (${fmt(busy)} busy): the server${cpu.postgresMsPerLoop === undefined ? "" : ", PostgreSQL"} and the load generator spent ${fmt(perLoopMs)} ms of CPU a loop, and ${target} loops a second on ${cores} cores leave them ${fmt((cores * 1000) / target)}`;
    } else {
      bound = `neither the server's main thread (busy ${fmt(cpu.serverMainThreadBusy ?? Number.NaN)}) nor the cores (${fmt(busy)} of ${cores} busy): the machine's other work held them`;
    }
    lines.push(`- ${name} agents, ${fmt(loopsPerSecond, 0)} loops a second against ${target} (the middle round): bound by ${bound}.`);
  }
  if (!lines.length) return [];
  return [
    "Where the time goes, for the loads that missed their rate:",
    "",
    ...lines,
    "",
    "Inside the server and PostgreSQL, from profiles: [docs/performance.md](../docs/performance.md#where-the-time-goes) (on the embedded database, PostgreSQL's WebAssembly and PGlite's JavaScript are about half of the server thread's busy time, Node's HTTP about a quarter; on PostgreSQL its backends cost the most per loop, in the engine's SQL functions), and the embedded database on a thread of its own (`TOLLGATE_EMBEDDED_THREAD=worker`), measured there.",
    "",
  ];
}

/** One load's figures, for the progress lines. */
function describeLoad(load: LoadFigures): string {
  const { cpu } = load;
  const parts = [`${fmt(load.loopsPerSecond, 0)} loops/s`];
  if (cpu.serverMsPerLoop !== undefined) parts.push(`server ${fmt(cpu.serverMsPerLoop)} ms CPU/loop (main thread ${fmt(cpu.serverMainThreadBusy!)} busy)`);
  if (cpu.postgresMsPerLoop !== undefined) parts.push(`PostgreSQL ${fmt(cpu.postgresMsPerLoop)}`);
  parts.push(`generator ${fmt(cpu.generatorMsPerLoop)}${Number.isNaN(cpu.generatorLoopDelayP99Ms) ? "" : ` (event-loop delay p99 ${fmt(cpu.generatorLoopDelayP99Ms, 1)} ms)`}`, `${fmt(coresBusy(load))} cores busy`);
  return parts.join(", ");
}

/**
 * `AGENTS` agents, each looping begin, ask, wait, complete while the operator
 * approves every push.
 */
async function fullLoops(server: BenchServer, operator: BenchOperator, kind: LoopKind): Promise<LoadFigures> {
  const agents = await loopingAgents(server, operator, kind, progress);
  try {
    return await loadFigures((agent) => agents.loop(agent), server);
  } finally {
    agents.close();
  }
}

/** LangGraph's flat graph, `AGENTS` threads at once each pausing and resuming in a loop: loops a second. */
async function langGraphLoops(): Promise<LoadFigures> {
  const langGraph = await langGraphSampler(1, "sqlite");
  try {
    return await loadFigures(async () => void (await langGraph.sample()));
  } finally {
    await langGraph.close();
  }
}

/** AGENTS plain-HTTP agents ask at once; seconds until the last has its decision. */
async function plainHttpBurst(server: BenchServer, operator: BenchOperator): Promise<number> {
  const http = plainCall(server);
  const { sessionId } = await http.mutate<{ sessionId: string }>("session.open", { title: "bench: burst" });
  const requests = await Promise.all(Array.from({ length: AGENTS }, (_, agent) => http.mutate<{ requestId: string }>("request.begin", { sessionId, agent: `burst-${agent}` })));
  const stopApproving = approveEveryAsk(operator, sessionId, progress);
  const started = now();
  await Promise.all(requests.map(({ requestId }, agent) => askOverHttp(http, requestId, { agent })));
  stopApproving();
  return (now() - started) / 1000;
}

function consoleBuilt(): void {
  if (existsSync(".next/BUILD_ID")) return;
  console.error("bench: building the console (next build) for the console-on server");
  const built = spawnSync("npx", ["next", "build"], { stdio: "inherit", env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" } });
  if (built.status !== 0) throw new Error("next build failed");
}

const fmt = (value: number, digits = 2) => value.toFixed(digits);
const verdict = (ok: boolean) => (ok ? "met" : "**missed**");
const progress = (text: string) => console.error(`bench:clients ${((now() - runStarted) / 1000).toFixed(0)} s: ${text}`);

/** What this run has started, stopped at the end or when the deadline cuts the run short. */
const servers = new Set<BenchServer>();
const children = new Set<ChildProcessWithoutNullStreams>();
const databases = new Set<ThrowawayDatabase>();
const runStarted = now();

/** The machine's load while the run goes: the 1-minute load average every 5 s. */
const loads: number[] = [loadavg()[0]!];
const loadSampler = setInterval(() => loads.push(loadavg()[0]!), 5_000);
loadSampler.unref();

async function startServer(databaseUrl: string | undefined, consoleOn: boolean, env: Record<string, string> = {}): Promise<BenchServer> {
  // A PostgreSQL database here is a copy of the migrated template: not emptied first.
  const server = await startBenchServer(databaseUrl, { reset: false, env: { TOLLGATE_CONSOLE: consoleOn ? "on" : "off", ...env } });
  servers.add(server);
  return server;
}

async function stopServer(server: BenchServer) {
  servers.delete(server);
  await server.stop();
}

/** The setting that puts the embedded database on a thread of its own (server/db/database-thread/). */
const DATABASE_THREAD = { TOLLGATE_EMBEDDED_THREAD: "worker" };

/**
 * The round trips, loads and burst on one database: its section of the
 * results. On the embedded database a third server, console on, runs its
 * database on a thread of its own (TOLLGATE_EMBEDDED_THREAD=worker), measured
 * beside the default.
 */
async function measureDatabase(label: string, urls: { on?: string; off?: string }, postgres: boolean): Promise<string[]> {
  const withThread = !postgres;
  progress(`${label}: starting a console-on and a console-off server${withThread ? ", and a console-on one with its database on a thread of its own" : ""}`);
  const [consoleOn, consoleOff, threaded] = await Promise.all([startServer(urls.on, true), startServer(urls.off, false), withThread ? startServer(undefined, true, DATABASE_THREAD) : undefined]);
  const on = await operatorOf(consoleOn);
  const off = await operatorOf(consoleOff);
  const onThread = threaded && (await operatorOf(threaded));
  try {
    progress(`${label}: warming the servers up (${SERVER_WARM_UP_SECONDS} s each)`);
    await warmUp(consoleOn, on.operator, SERVER_WARM_UP_SECONDS);
    await warmUp(consoleOff, off.operator, SERVER_WARM_UP_SECONDS);
    if (threaded && onThread) await warmUp(threaded, onThread.operator, SERVER_WARM_UP_SECONDS);
    progress(`${label}: LangGraph warming up`);
    const samplers = [
      await langGraphFlat(),
      await sdkSampler("SDK", consoleOn, on),
      await plainHttpSampler("plain HTTP", consoleOn, on),
      await pythonSampler(consoleOn, on),
      await sdkSampler("SDK, console off", consoleOff, off),
      await plainHttpSampler("plain HTTP, console off", consoleOff, off),
      ...(threaded && onThread ? [await sdkSampler("SDK, database thread", threaded, onThread), await plainHttpSampler("plain HTTP, database thread", threaded, onThread)] : []),
    ];
    // Warm-up: a block of each, not counted.
    for (const sampler of samplers) for (let i = 0; i < BLOCK; i++) await sampler.sample(i);
    progress(`${label}: ${BLOCKS} interleaved blocks of ${BLOCK} round trips per side`);
    const blocks = await interleavedBlocks(samplers);
    for (const sampler of samplers) await sampler.close?.();
    const [langGraph, sdk, http, python, sdkOff, httpOff, sdkThread, httpThread] = blocks as [number[][], number[][], number[][], number[][], number[][], number[][], number[][]?, number[][]?];
    const all = (series: number[][]) => series.flat();

    // The loads, console on and off alternating round by round, LangGraph's among them.
    const loads = { sdkOn: [] as LoadFigures[], httpOn: [] as LoadFigures[], sdkOff: [] as LoadFigures[], httpOff: [] as LoadFigures[], sdkThread: [] as LoadFigures[], httpThread: [] as LoadFigures[], langGraph: [] as LoadFigures[] };
    for (let round = 0; round < LOOP_ROUNDS; round++) {
      const runs: [keyof typeof loads, () => Promise<LoadFigures>][] = [
        ["sdkOn", () => fullLoops(consoleOn, on.operator, "sdk")],
        ["sdkOff", () => fullLoops(consoleOff, off.operator, "sdk")],
        ["httpOn", () => fullLoops(consoleOn, on.operator, "http")],
        ["httpOff", () => fullLoops(consoleOff, off.operator, "http")],
        ...(threaded && onThread
          ? ([
              ["sdkThread", () => fullLoops(threaded, onThread.operator, "sdk")],
              ["httpThread", () => fullLoops(threaded, onThread.operator, "http")],
            ] as [keyof typeof loads, () => Promise<LoadFigures>][])
          : []),
        ["langGraph", () => langGraphLoops()],
      ];
      if (round % 2) runs.reverse();
      for (const [key, load] of runs) {
        progress(`${label}: ${AGENTS} agents looping (${key}), round ${round + 1} of ${LOOP_ROUNDS}`);
        const figures = await load();
        loads[key].push(figures);
        progress(`${label}: ${key}: ${describeLoad(figures)}`);
      }
    }
    progress(`${label}: a burst of ${AGENTS} plain-HTTP agents`);
    const burst = await plainHttpBurst(consoleOn, on.operator);

    const sdkTarget = postgres ? 500 : 250;
    const httpTarget = postgres ? 300 : 150;
    /** A figure of each round of a load: its median, then each round's. */
    const figure = (key: keyof typeof loads, of: (load: LoadFigures) => number | undefined, digits = 2) => {
      const values = loads[key].map(of).filter((value): value is number => value !== undefined && !Number.isNaN(value));
      if (!values.length) return "—";
      return values.length > 1 ? `${fmt(median(values), digits)} (${values.map((value) => fmt(value, digits)).join(", ")})` : fmt(values[0]!, digits);
    };
    const rateOf = (key: keyof typeof loads) => median(loads[key].map((load) => load.loopsPerSecond));
    const onOff = (a: keyof typeof loads, b: keyof typeof loads) => rateOf(a) / rateOf(b);
    const loadRow = (name: string, key: keyof typeof loads, target: string) =>
      `| ${name} | ${figure(key, (load) => load.loopsPerSecond, 0)} | ${target} | ${figure(key, (load) => load.cpu.serverMsPerLoop)} | ${figure(key, (load) => load.cpu.serverMainThreadBusy)} | ${figure(key, (load) => load.cpu.postgresMsPerLoop)} | ${figure(key, (load) => load.cpu.generatorMsPerLoop)} | ${figure(key, (load) => load.cpu.generatorLoopDelayP99Ms, 1)} | ${figure(key, coresBusy)} |`;
    return [
      `## ${label}`,
      "",
      "| round trip | server | p50 ms | p99 ms | ratio (median of block ratios) | target |",
      "|---|---|---|---|---|---|",
      `| LangGraph.js flat pause + resume (SQLite checkpointer, in this process) | — | ${fmt(median(all(langGraph)))} | ${fmt(percentile(all(langGraph), 99))} | 1 | |`,
      `| SDK, decision pushed on its held socket | console on | ${fmt(median(all(sdk)))} | ${fmt(percentile(all(sdk), 99))} | ${fmt(blockRatio(sdk, langGraph))}× LangGraph | ≤ 1.5×: ${verdict(blockRatio(sdk, langGraph) <= 1.5)} |`,
      `| plain HTTP: approval.request, then approval.await long-poll | console on | ${fmt(median(all(http)))} | ${fmt(percentile(all(http), 99))} | ${fmt(blockRatio(http, sdk))}× SDK | ≤ 1.2×: ${verdict(blockRatio(http, sdk) <= 1.2)} |`,
      `| Python client (kept-alive connection, long-poll) | console on | ${fmt(median(all(python)))} | ${fmt(percentile(all(python), 99))} | ${fmt(blockRatio(python, sdk))}× SDK | ≤ 1.5×: ${verdict(blockRatio(python, sdk) <= 1.5)} |`,
      `| SDK | console off | ${fmt(median(all(sdkOff)))} | ${fmt(percentile(all(sdkOff), 99))} | console on ÷ off: ${fmt(blockRatio(sdk, sdkOff))} | ≤ 1.05: ${verdict(blockRatio(sdk, sdkOff) <= 1.05)} |`,
      `| plain HTTP | console off | ${fmt(median(all(httpOff)))} | ${fmt(percentile(all(httpOff), 99))} | console on ÷ off: ${fmt(blockRatio(http, httpOff))} | ≤ 1.05: ${verdict(blockRatio(http, httpOff) <= 1.05)} |`,
      ...(sdkThread && httpThread
        ? [
            `| SDK | console on, database thread | ${fmt(median(all(sdkThread)))} | ${fmt(percentile(all(sdkThread), 99))} | thread ÷ default: ${fmt(blockRatio(sdkThread, sdk))}; ${fmt(blockRatio(sdkThread, langGraph))}× LangGraph | a setting, kept off by default where its round trip costs over 5 % |`,
            `| plain HTTP | console on, database thread | ${fmt(median(all(httpThread)))} | ${fmt(percentile(all(httpThread), 99))} | thread ÷ default: ${fmt(blockRatio(httpThread, http))}; ${fmt(blockRatio(httpThread, sdkThread))}× its SDK | |`,
          ]
        : []),
      "",
      ...(blockRatio(sdk, langGraph) > 1.5 || blockRatio(http, sdk) > 1.2
        ? [
            `Where a round trip's time goes: LangGraph's pause and resume is a write and a read of SQLite in this process; the SDK's is two HTTP calls (the ask, the operator's decision) and a push on its socket, each through the server's one thread${postgres ? "" : ", which on the embedded database also runs PostgreSQL's statements"}; plain HTTP adds the long-poll's own request and answer where the SDK is pushed the decision. The cost of each part, from profiles: [docs/performance.md](../docs/performance.md#where-the-time-goes).`,
            "",
          ]
        : []),
      `| ${AGENTS} agents at once, full loops (begin, ask, wait, complete) | loops a second | target | server CPU ms per loop | server's main thread busy | PostgreSQL CPU ms per loop | load generator CPU ms per loop | load generator's event-loop delay p99 ms | cores busy (the three) |`,
      "|---|---|---|---|---|---|---|---|---|",
      loadRow(`LangGraph.js, ${AGENTS} threads pausing and resuming in this process (SQLite)`, "langGraph", ""),
      loadRow("SDK, console on", "sdkOn", `≥ ${sdkTarget}: ${verdict(rateOf("sdkOn") >= sdkTarget)}`),
      loadRow("SDK, console off", "sdkOff", `on ÷ off ${fmt(onOff("sdkOn", "sdkOff"))}, ≥ 0.95: ${verdict(onOff("sdkOn", "sdkOff") >= 0.95)}`),
      loadRow("plain HTTP, console on", "httpOn", `≥ ${httpTarget}: ${verdict(rateOf("httpOn") >= httpTarget)}`),
      loadRow("plain HTTP, console off", "httpOff", `on ÷ off ${fmt(onOff("httpOn", "httpOff"))}, ≥ 0.95: ${verdict(onOff("httpOn", "httpOff") >= 0.95)}`),
      ...(withThread
        ? [
            loadRow("SDK, console on, database thread (`TOLLGATE_EMBEDDED_THREAD=worker`)", "sdkThread", `≥ ${sdkTarget}: ${verdict(rateOf("sdkThread") >= sdkTarget)}; ${fmt(onOff("sdkThread", "sdkOn"))}× the default`),
            loadRow("plain HTTP, console on, database thread", "httpThread", `≥ ${httpTarget}: ${verdict(rateOf("httpThread") >= httpTarget)}; ${fmt(onOff("httpThread", "httpOn"))}× the default`),
          ]
        : []),
      "",
      `Each cell is the median, then each round's figure. CPU per loop is user and system time over the timed window divided by the loops in it, the operator's decisions included: the server's process (\`/proc/<pid>/stat\`, all its threads${postgres ? "" : "; the embedded database runs inside it"}), ${postgres ? "the PostgreSQL backends serving its database (\`/proc\`, by their process titles; PostgreSQL's shared WAL writer and checkpointer are not in it), " : ""}and this process (the agents and the operator on one Node thread; for LangGraph, its threads). CPU per loop holds on a loaded machine where loops a second do not. The server's main thread busy is its CPU time over the wall time: near 1, that one thread bounds the rate. Cores busy is the CPU per loop of the server${postgres ? ", PostgreSQL" : ""} and this process, times loops a second: near the machine's ${availableParallelism()}, the cores are the bound; well under, the machine's other work took them.`,
      "",
      `A burst of ${AGENTS} plain-HTTP agents asking at once (console on): the last decision after ${fmt(burst)} s (target ≤ 2 s: ${verdict(burst <= 2)}).`,
      "",
      ...whereTheTimeGoes([
        ["SDK", loads.sdkOn, sdkTarget],
        ["plain HTTP", loads.httpOn, httpTarget],
      ]),
    ];
  } finally {
    on.operator.close();
    off.operator.close();
    onThread?.operator.close();
    await stopServer(consoleOn);
    await stopServer(consoleOff);
    if (threaded) await stopServer(threaded);
  }
}

function header(): string[] {
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  let commit = "unknown commit";
  try {
    commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  } catch {
    // not a checkout
  }
  const sortedLoads = [...loads].sort((a, b) => a - b);
  return [
    `# Every client side by side${QUICK ? " (--quick: a development run, not the figures)" : ""}`,
    "",
    `${new Date().toISOString()} at ${commit}, \`npm run bench:clients${QUICK ? " -- --quick" : ""}\`, ${fmt((now() - runStarted) / 60_000, 1)} minutes. Machine: ${availableParallelism()} cores (${cpu}), ${Math.round(totalmem() / 2 ** 30)} GiB; Node ${process.version}. The servers, the agents, the operator and LangGraph share the machine.`,
    `Load average (1 minute) during the run, sampled every 5 s: ${fmt(sortedLoads[0]!)} at least, ${fmt(median(sortedLoads))} median, ${fmt(sortedLoads.at(-1)!)} at most (this run alone keeps about 2 busy; more is other work on the machine).`,
    "",
    `Round trips: agent asks → the operator's socket hears it → the operator decides over HTTP → the agent has the decision. ${BLOCKS} interleaved blocks of ${BLOCK} per side after a counted-out block of each, the order rotating each block; a ratio is the median over blocks of the block medians' ratio. Each server warmed up ${SERVER_WARM_UP_SECONDS} s first. Loads: ${AGENTS} agents, ${LOOP_SECONDS} s measured after 2 s of the same load, ${LOOP_ROUNDS} round(s), console on and off alternating. The console-on server is the default configuration (\`TOLLGATE_CONSOLE=on\`, the production bundle with Next.js in the process); the console-off one runs beside it on the same database kind. On the embedded database a third server, console on, runs its database on a thread of its own (\`TOLLGATE_EMBEDDED_THREAD=worker\`, a setting, not the default). The plain-HTTP agents make JSON calls over kept-alive HTTP/1.1 through undici's \`request\` (not Node's fetch, which cost this process twice the CPU per loop); the SDK sends through undici too; the Python client uses its standard library.`,
    "",
  ];
}

async function writeResults(sections: string[], stoppedAt?: string) {
  const lines = [...header(), ...sections];
  if (stragglers) lines.push(`${stragglers} agents' loops were still waiting ${STRAGGLER_SECONDS} s after their load ended, and were left behind (their loops are not counted).`, "");
  if (stoppedAt) lines.push(`**The run stopped at its ${DEADLINE_MINUTES}-minute bound** while measuring ${stoppedAt}; the sections above are complete, the rest was not measured.`, "");
  const text = lines.join("\n");
  const file = "bench/results-clients.md";
  await writeFile(file, text);
  console.log(text);
  console.log(`bench:clients: results written to ${file}`);
}

/** A database whose measurement failed: its section says so, and the run goes on. */
function failed(label: string, error: unknown): string[] {
  progress(`${label} failed: ${String(error)}`);
  return [`## ${label}`, "", `**Not measured**: ${String(error)}`, ""];
}

async function stopEverything() {
  for (const child of children) child.kill("SIGKILL");
  await Promise.all([...servers].map((server) => server.stop().catch(() => undefined)));
  await Promise.all([...databases].map((database) => database.drop().catch(() => undefined)));
}

async function main() {
  consoleBuilt();
  const sections: string[] = [];
  let measuring = "the start";
  const deadline = setTimeout(() => {
    void (async () => {
      await writeResults(sections, measuring);
      await stopEverything();
      process.exit(1);
    })();
  }, DEADLINE_MINUTES * 60_000);
  deadline.unref();
  try {
    if (DATABASES.includes("embedded")) {
      measuring = "the embedded database";
      sections.push(...(await measureDatabase("Embedded database (PGlite)", {}, false).catch((error: unknown) => failed("Embedded database (PGlite)", error))));
    }
    if (DATABASES.includes("postgres")) {
      measuring = "PostgreSQL";
      const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://root@127.0.0.1:5432/postgres";
      const made = await postgresTemplate(adminUrl)
        .then((template) => Promise.all([createEmptyPostgresDatabase(adminUrl, "tollgate_bench", template), createEmptyPostgresDatabase(adminUrl, "tollgate_bench", template)]))
        .catch((error: unknown) => {
        progress(`PostgreSQL at ${adminUrl} does not answer (${String(error)}): left out`);
        sections.push("## PostgreSQL", "", `Not measured: PostgreSQL at ${adminUrl} did not answer.`, "");
        return null;
      });
      if (made) {
        for (const database of made) databases.add(database);
        sections.push(...(await measureDatabase("PostgreSQL", { on: made[0].url, off: made[1].url }, true).catch((error: unknown) => failed("PostgreSQL", error))));
      }
    }
  } finally {
    clearTimeout(deadline);
    await stopEverything();
  }
  await writeResults(sections);
}

await main();
process.exit(0);
