// Every client side by side, as users run them: the SDK (its decision pushed on
// the held socket), plain HTTP (approval.request, then the approval.await
// long-poll, as curl or any language does it) and the Python client, against
// LangGraph.js's own in-process pause and resume, on a server with the console
// on (the default) and on one with it off. All samplers run in one process, in
// interleaved blocks of 25 whose order rotates, so a machine whose speed drifts
// slows all alike; each ratio is the median over the blocks of the block
// medians' ratio. Then full agent loops (begin, ask, wait, complete) of 100
// agents at once, and a burst of 100 plain-HTTP agents asking together.
//
//   npm run bench:clients                     # the embedded database
//   BENCH_DATABASE_URL=postgres://... npm run bench:clients
//
// Writes bench/results-clients.md (with the machine's size) and prints it.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { availableParallelism, cpus, totalmem } from "node:os";
import { createInterface } from "node:readline";
import { createTollgate } from "../sdk/src/index.ts";
import { connectOperator, type BenchOperator } from "./approver.ts";
import { BLOCK } from "./interleave.ts";
import { langGraphSampler } from "./langgraph.ts";
import { startBenchServer, type BenchServer } from "./server.ts";
import { percentile } from "./stats.ts";

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 8);
const LOOP_SECONDS = Number(process.env.BENCH_LOOP_SECONDS ?? 8);
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

/** A plain JSON call over HTTP, as any language makes it (Node's fetch keeps the connection alive). */
function plainCall(server: BenchServer) {
  const headers = { authorization: `Bearer ${server.agentKey}`, "content-type": "application/json" };
  const base = `${server.url}/api/trpc/`;
  return {
    async mutate<T>(path: string, input: unknown): Promise<T> {
      const answer = await fetch(base + path, { method: "POST", headers, body: JSON.stringify(input) });
      const body = (await answer.json()) as { result?: { data: T }; error?: unknown };
      if (!body.result) throw new Error(`${path}: ${JSON.stringify(body.error)}`);
      return body.result.data;
    },
    async query<T>(path: string, input: unknown): Promise<T> {
      const answer = await fetch(`${base}${path}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers });
      const body = (await answer.json()) as { result?: { data: T }; error?: unknown };
      if (!body.result) throw new Error(`${path}: ${JSON.stringify(body.error)}`);
      return body.result.data;
    },
  };
}

type Asked = { approvalId: string; status: string };

/** Asks over plain HTTP and long-polls approval.await until decided. */
async function askOverHttp(http: ReturnType<typeof plainCall>, requestId: string, args: unknown): Promise<Asked> {
  let answer = await http.mutate<Asked>("approval.request", { requestId, tool: "send_email", args });
  while (answer.status === "PENDING") answer = await http.query<Asked>("approval.await", { approvalId: answer.approvalId, timeoutMs: 55_000 });
  return answer;
}

async function plainHttpSampler(server: BenchServer, console: Awaited<ReturnType<typeof operatorOf>>): Promise<Sampler> {
  const http = plainCall(server);
  const { sessionId } = await http.mutate<{ sessionId: string }>("session.open", { title: "bench: plain HTTP" });
  const { requestId } = await http.mutate<{ requestId: string }>("request.begin", { sessionId, agent: "http-agent" });
  return {
    name: "plain HTTP",
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
    close: () => void child.kill(),
  };
}

async function langGraphFlat(): Promise<Sampler> {
  const langGraph = await langGraphSampler(1, "sqlite");
  return { name: "LangGraph (SQLite, in process)", sample: () => langGraph.sample(), close: () => langGraph.close() };
}

/**
 * `AGENTS` agents, each looping begin, ask, wait, complete while the operator
 * approves every push; loops a second over LOOP_SECONDS after a warm-up.
 */
async function fullLoops(server: BenchServer, operator: BenchOperator, kind: "sdk" | "http"): Promise<number> {
  const sdk = createTollgate({ url: server.url, apiKey: server.agentKey });
  const http = plainCall(server);
  const { sessionId } = await sdk.openSession({ title: `bench: ${kind} loops` });
  const onRequested = (event: { approvalId: string; sessionId: string }) => {
    if (event.sessionId === sessionId) void operator.client.approval.decide.mutate({ approvalId: event.approvalId, action: "approve" }).catch(() => undefined);
  };
  operator.socket.on("approval:requested", onRequested);
  const loop = async (agent: number) => {
    if (kind === "sdk") {
      const request = await sdk.begin({ sessionId, agent: `loop-${agent}` });
      if ((await sdk.ask({ requestId: request.requestId, tool: "send_email", args: { agent } })).status !== "APPROVED") throw new Error("a loop was not approved");
      await request.complete();
    } else {
      const { requestId } = await http.mutate<{ requestId: string }>("request.begin", { sessionId, agent: `loop-${agent}` });
      if ((await askOverHttp(http, requestId, { agent })).status !== "APPROVED") throw new Error("a loop was not approved");
      await http.mutate("request.complete", { requestId });
    }
  };
  const runUntil = async (deadline: number) => {
    let loops = 0;
    await Promise.all(
      Array.from({ length: AGENTS }, async (_, agent) => {
        while (now() < deadline) {
          await loop(agent);
          loops += 1;
        }
      }),
    );
    return loops;
  };
  await runUntil(now() + 2_000);
  const started = now();
  const loops = await runUntil(started + LOOP_SECONDS * 1000);
  const perSecond = loops / ((now() - started) / 1000);
  operator.socket.off("approval:requested", onRequested);
  sdk.close();
  return perSecond;
}

/** AGENTS plain-HTTP agents ask at once; seconds until the last has its decision. */
async function plainHttpBurst(server: BenchServer, operator: BenchOperator): Promise<number> {
  const http = plainCall(server);
  const { sessionId } = await http.mutate<{ sessionId: string }>("session.open", { title: "bench: burst" });
  const requests = await Promise.all(Array.from({ length: AGENTS }, (_, agent) => http.mutate<{ requestId: string }>("request.begin", { sessionId, agent: `burst-${agent}` })));
  const onRequested = (event: { approvalId: string; sessionId: string }) => {
    if (event.sessionId === sessionId) void operator.client.approval.decide.mutate({ approvalId: event.approvalId, action: "approve" }).catch(() => undefined);
  };
  operator.socket.on("approval:requested", onRequested);
  const started = now();
  await Promise.all(requests.map(({ requestId }, agent) => askOverHttp(http, requestId, { agent })));
  operator.socket.off("approval:requested", onRequested);
  return (now() - started) / 1000;
}

function consoleBuilt(): void {
  if (existsSync(".next/BUILD_ID")) return;
  console.error("bench: building the console (next build) for the console-on server");
  const built = spawnSync("npx", ["next", "build"], { stdio: "inherit", env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" } });
  if (built.status !== 0) throw new Error("next build failed");
}

const fmt = (value: number, digits = 2) => value.toFixed(digits);

async function main() {
  consoleBuilt();
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  const database = databaseUrl ? "PostgreSQL" : "embedded (PGlite)";
  const started: BenchServer[] = [];
  const lines: string[] = [];
  try {
    const consoleOn = await startBenchServer(databaseUrl, { env: { TOLLGATE_CONSOLE: "on" } });
    started.push(consoleOn);
    // A second PostgreSQL database would be needed for a second server there: the console-off server runs embedded then.
    const consoleOff = await startBenchServer(undefined, { env: { TOLLGATE_CONSOLE: "off" } });
    started.push(consoleOff);
    const on = await operatorOf(consoleOn);
    const off = await operatorOf(consoleOff);
    const samplers = [
      await langGraphFlat(),
      await sdkSampler("SDK", consoleOn, on),
      await plainHttpSampler(consoleOn, on),
      await pythonSampler(consoleOn, on),
      await sdkSampler("SDK, console off", consoleOff, off),
    ];
    // Warm-up: a block of each, not counted.
    for (const sampler of samplers) for (let i = 0; i < BLOCK; i++) await sampler.sample(i);
    const blocks = await interleavedBlocks(samplers);
    for (const sampler of samplers) await sampler.close?.();
    const [langGraph, sdk, http, python, sdkOff] = blocks as [number[][], number[][], number[][], number[][], number[][]];
    const all = (series: number[][]) => series.flat();

    const sdkLoops = await fullLoops(consoleOn, on.operator, "sdk");
    const httpLoops = await fullLoops(consoleOn, on.operator, "http");
    const burst = await plainHttpBurst(consoleOn, on.operator);
    on.operator.close();
    off.operator.close();

    const verdict = (ok: boolean) => (ok ? "met" : "**missed**");
    const cpu = cpus()[0]?.model ?? "unknown CPU";
    lines.push(
      `# Every client side by side (${database})`,
      "",
      `${new Date().toISOString()}; ${availableParallelism()} cores (${cpu}), ${Math.round(totalmem() / 2 ** 30)} GiB; Node ${process.version}. The server, the agents, the operator and LangGraph share the machine.`,
      `Round trips: agent asks → the operator's socket hears it → the operator decides over HTTP → the agent has the decision. ${BLOCKS} interleaved blocks of ${BLOCK} per side, the order rotating each block; ratios are the median over blocks of the block medians' ratio. Server: console on (the default) unless said; ${database}.`,
      "",
      "| round trip | p50 ms | p99 ms | ratio | target |",
      "|---|---|---|---|---|",
      `| LangGraph.js flat pause + resume (SQLite checkpointer, in process) | ${fmt(median(all(langGraph)))} | ${fmt(percentile(all(langGraph), 99))} | 1 | |`,
      `| SDK, decision pushed on its held socket | ${fmt(median(all(sdk)))} | ${fmt(percentile(all(sdk), 99))} | ${fmt(blockRatio(sdk, langGraph))}× LangGraph | ≤ 1.5×: ${verdict(blockRatio(sdk, langGraph) <= 1.5)} |`,
      `| plain HTTP: approval.request, then approval.await long-poll | ${fmt(median(all(http)))} | ${fmt(percentile(all(http), 99))} | ${fmt(blockRatio(http, sdk))}× SDK | ≤ 1.2×: ${verdict(blockRatio(http, sdk) <= 1.2)} |`,
      `| Python client (kept-alive connection, long-poll) | ${fmt(median(all(python)))} | ${fmt(percentile(all(python), 99))} | ${fmt(blockRatio(python, sdk))}× SDK | ≤ 1.5×: ${verdict(blockRatio(python, sdk) <= 1.5)} |`,
      `| SDK, console off (embedded database) | ${fmt(median(all(sdkOff)))} | ${fmt(percentile(all(sdkOff), 99))} | console on ÷ off: ${fmt(blockRatio(sdk, sdkOff))} | ≤ 1.05: ${verdict(blockRatio(sdk, sdkOff) <= 1.05)} |`,
      "",
      `| ${AGENTS} agents, full loops (begin, ask, wait, complete), console on | loops a second | target (${database}) |`,
      "|---|---|---|",
      `| SDK | ${fmt(sdkLoops, 0)} | ≥ ${databaseUrl ? 500 : 250}: ${verdict(sdkLoops >= (databaseUrl ? 500 : 250))} |`,
      `| plain HTTP | ${fmt(httpLoops, 0)} | ≥ ${databaseUrl ? 300 : 150}: ${verdict(httpLoops >= (databaseUrl ? 300 : 150))} |`,
      "",
      `A burst of ${AGENTS} plain-HTTP agents asking at once: the last decision after ${fmt(burst)} s (target < 2 s: ${verdict(burst < 2)}).`,
      "",
    );
  } finally {
    for (const server of started) await server.stop();
  }
  const text = lines.join("\n");
  const file = databaseUrl ? "bench/results-clients-postgres.md" : "bench/results-clients.md";
  await writeFile(file, text);
  console.log(text);
  console.log(`written to ${file}`);
}

await main();
process.exit(0);
