// What each of the hot path's caches saves: a server with every cache on
// against the same server with one turned off (TOLLGATE_CACHES_OFF), measured
// in the same run, A and B alternating: one round trip at a time through the
// SDK (agent asks on one request again and again, the operator hears it on the
// console's socket and decides over HTTP), in interleaved blocks of 25, and
// 100 agents at once looping begin, ask, wait, complete. Absolute figures move
// with the machine's load; the ratios, measured side by side, do not.
//
//   npm run bench:caches                      # every cache, about 12 minutes on an idle machine
//   npm run bench:caches -- --quick           # fewer blocks and shorter loads
//   BENCH_CACHES=gate-facts,policies npm run bench:caches
//
// The embedded database; the servers run with the console off (the caches are
// the same with it on). Writes bench/results-caches.md and prints it.
import { writeFile } from "node:fs/promises";
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { createTollgate } from "../sdk/src/index.ts";
import { HOT_PATH_CACHES, type HotPathCache } from "../server/services/cache-names.ts";
import { connectOperator, type BenchOperator } from "./approver.ts";
import { BLOCK } from "./interleave.ts";
import { startBenchServer, type BenchServer } from "./server.ts";
import { median } from "./stats.ts";
import { warmUp } from "./warm-up.ts";

const QUICK = process.argv.includes("--quick");
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? (QUICK ? 3 : 6));
const LOOP_SECONDS = Number(process.env.BENCH_LOOP_SECONDS ?? (QUICK ? 3 : 5));
const LOOP_ROUNDS = Number(process.env.BENCH_LOOP_ROUNDS ?? 2);
const AGENTS = 100;
const CACHES = (process.env.BENCH_CACHES?.split(",") ?? [...HOT_PATH_CACHES]) as HotPathCache[];
const now = () => performance.now();

/** The operator's decision, sent again when it fails (answered with the stored one then), up to three times; a failure is said. */
function decide(operator: BenchOperator, approvalId: string, attempt = 1): void {
  void operator.client.approval.decide.mutate({ approvalId, action: "approve" }).catch((error: unknown) => {
    console.error(`bench:caches: a decision failed (attempt ${attempt}): ${String(error)}`);
    if (attempt < 3) decide(operator, approvalId, attempt + 1);
  });
}

type Side = { server: BenchServer; operator: BenchOperator & { close(): void } };

async function side(cachesOff: string): Promise<Side> {
  const server = await startBenchServer(undefined, { env: { TOLLGATE_CACHES_OFF: cachesOff } });
  const operator = await connectOperator(server);
  await warmUp(server, operator, QUICK ? 2 : 5);
  return { server, operator };
}

async function close(each: Side) {
  each.operator.close();
  await each.server.stop();
}

/** One SDK round trip after another on one request: a sampler. */
async function roundTrips({ server, operator }: Side) {
  const sdk = createTollgate({ url: server.url, apiKey: server.agentKey });
  const { sessionId } = await sdk.openSession({ title: "bench: caches" });
  const { requestId } = await sdk.begin({ sessionId, agent: "cache-agent" });
  const onRequested = (event: { approvalId: string; sessionId: string }) => {
    if (event.sessionId === sessionId) decide(operator, event.approvalId);
  };
  operator.socket.on("approval:requested", onRequested);
  return {
    async sample(i: number) {
      const started = now();
      if ((await sdk.ask({ requestId, tool: "send_email", args: { i } })).status !== "APPROVED") throw new Error("not approved");
      return now() - started;
    },
    close() {
      operator.socket.off("approval:requested", onRequested);
      sdk.close();
    },
  };
}

/** AGENTS agents looping begin, ask, wait, complete through the SDK: loops a second. */
async function loops({ server, operator }: Side): Promise<number> {
  const sdk = createTollgate({ url: server.url, apiKey: server.agentKey });
  const { sessionId } = await sdk.openSession({ title: "bench: cache loops" });
  const onRequested = (event: { approvalId: string; sessionId: string }) => {
    if (event.sessionId === sessionId) decide(operator, event.approvalId);
  };
  operator.socket.on("approval:requested", onRequested);
  const runUntil = async (deadline: number) => {
    let count = 0;
    await Promise.all(
      Array.from({ length: AGENTS }, async (_, agent) => {
        while (now() < deadline) {
          const request = await sdk.begin({ sessionId, agent: `loop-${agent}` });
          if ((await sdk.ask({ requestId: request.requestId, tool: "send_email", args: { agent } })).status !== "APPROVED") throw new Error("not approved");
          await request.complete();
          count += 1;
        }
      }),
    );
    return count;
  };
  try {
    await runUntil(now() + 1_500);
    const started = now();
    const count = await runUntil(started + LOOP_SECONDS * 1000);
    return count / ((now() - started) / 1000);
  } finally {
    operator.socket.off("approval:requested", onRequested);
    sdk.close();
  }
}

/** Round trips and loads of `a` and `b` side by side: b's round trip over a's (median of block ratios), and b's rate over a's. */
async function compare(a: Side, b: Side) {
  const samplers = [await roundTrips(a), await roundTrips(b)];
  for (const sampler of samplers) for (let i = 0; i < BLOCK; i++) await sampler.sample(i);
  const blockMedians: [number[], number[]] = [[], []];
  for (let block = 0; block < BLOCKS; block++) {
    for (const index of block % 2 ? [1, 0] : [0, 1]) {
      const samples: number[] = [];
      for (let i = 0; i < BLOCK; i++) samples.push(await samplers[index]!.sample(i));
      blockMedians[index]!.push(median(samples));
    }
  }
  for (const sampler of samplers) sampler.close();
  const rates: [number[], number[]] = [[], []];
  for (let round = 0; round < LOOP_ROUNDS; round++) {
    for (const index of round % 2 ? [1, 0] : [0, 1]) rates[index]!.push(await loops(index ? b : a));
  }
  return {
    roundTripMs: [median(blockMedians[0]), median(blockMedians[1])],
    roundTripRatio: median(blockMedians[1].map((value, index) => value / blockMedians[0][index]!)),
    loopsPerSecond: [median(rates[0]), median(rates[1])],
    rateRatio: median(rates[1]) / median(rates[0]),
  };
}

const loads = [loadavg()[0]!];
const sampler = setInterval(() => loads.push(loadavg()[0]!), 5_000);
sampler.unref();
const runStarted = now();
const rows: string[] = [];
const baseline = await side("");
try {
  for (const cache of CACHES) {
    console.error(`bench:caches ${((now() - runStarted) / 1000).toFixed(0)} s: ${cache} off against every cache on`);
    const without = await side(cache);
    try {
      const result = await compare(baseline, without);
      const pct = (ratio: number) => `${ratio >= 1 ? "+" : ""}${((ratio - 1) * 100).toFixed(1)} %`;
      rows.push(
        `| ${cache} | ${result.roundTripMs[0]!.toFixed(2)} → ${result.roundTripMs[1]!.toFixed(2)} (${pct(result.roundTripRatio)}) | ${result.loopsPerSecond[0]!.toFixed(0)} → ${result.loopsPerSecond[1]!.toFixed(0)} (${pct(result.rateRatio)}) |`,
      );
      console.error(rows.at(-1));
    } finally {
      await close(without);
    }
  }
} finally {
  await close(baseline);
}
const sortedLoads = [...loads].sort((x, y) => x - y);
const text = [
  `# What each hot-path cache saves${QUICK ? " (--quick: a development run)" : ""}`,
  "",
  `${new Date().toISOString()}, \`npm run bench:caches${QUICK ? " -- --quick" : ""}\`, ${((now() - runStarted) / 60_000).toFixed(1)} minutes. Machine: ${availableParallelism()} cores (${cpus()[0]?.model ?? "unknown CPU"}), ${Math.round(totalmem() / 2 ** 30)} GiB; Node ${process.version}. Load average (1 minute) during the run: ${sortedLoads[0]!.toFixed(1)} at least, ${median(sortedLoads).toFixed(1)} median, ${sortedLoads.at(-1)!.toFixed(1)} at most (this run alone keeps about 2 busy).`,
  "",
  `Embedded database, console off, a server with every cache on (A) beside one with the named cache off (B). Round trip: one SDK ask at a time on one request, decided by the operator over HTTP on hearing it on the console's socket; medians of ${BLOCKS} interleaved blocks of ${BLOCK}, the change the median of the blocks' ratios. Loads: ${AGENTS} SDK agents looping begin, ask, wait, complete, ${LOOP_SECONDS} s after 1.5 s of the same, ${LOOP_ROUNDS} rounds alternating A and B. Turning a cache off costs a longer round trip (a rise) and fewer loops a second (a fall).`,
  "",
  "| cache off | round trip p50 ms, A → B (change) | 100 agents, loops a second, A → B (change) |",
  "|---|---|---|",
  ...rows,
  "",
].join("\n");
await writeFile("bench/results-caches.md", text);
console.log(text);
console.log("bench:caches: results written to bench/results-caches.md");
process.exit(0);
