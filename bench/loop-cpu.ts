// The server's CPU time per full agent loop (begin, ask, wait for the
// operator, complete), 100 agents at once: the figure to compare a change of
// the hot path by on a shared, loaded machine, where loops a second mostly
// measure the other work on it. The server's user and system time is read
// from /proc/<pid>/stat before and after a fixed number of loops, on a warmed
// server with the console on (the default), on the embedded database unless
// LOOP_CPU_DATABASE names a PostgreSQL one (emptied first).
//
//   npx tsx bench/loop-cpu.ts                      # plain HTTP and SDK, 3 runs of 3,000 loops each
//   LOOP_CPU_KINDS=http LOOP_CPU_RUNS=5 npx tsx bench/loop-cpu.ts
//   cp dist/server.mjs dist/before.mjs             # then change the code, and:
//   LOOP_CPU_AGAINST=dist/before.mjs npx tsx bench/loop-cpu.ts   # both builds at once, runs alternating
//                                                  # (several, comma-separated, each kept in dist/)
//
// LOOP_CPU_LOOPS (3000) loops a run after LOOP_CPU_WARM_UP_LOOPS (3000) not
// counted; LOOP_CPU_CONSOLE=off for a server without the console. Prints each
// run and the median for each build and kind, with the CPU per loop of this
// process (the load generator: agents and operator), of PostgreSQL's backends
// when on PostgreSQL, and how busy the server's main thread was.
// BENCH_SERVER_NODE_ARGS passes Node options to the servers (--cpu-prof ...,
// as in npm run bench); LOOP_CPU_GENERATOR_PROFILE=DIR writes a CPU profile of
// this process for each measured run (its timed loops only) into DIR, for
// bench/profile-summary.ts.
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import path from "node:path";
import { loopingAgents, type LoopKind } from "./agent-loops.ts";
import { connectOperator } from "./approver.ts";
import { cpuWindow, type LoopCpu } from "./process-cpu.ts";
import { startBenchServer, type BenchServer } from "./server.ts";
import { percentile } from "./stats.ts";

const KINDS = (process.env.LOOP_CPU_KINDS ?? "http,sdk").split(",") as LoopKind[];
const LOOPS = Number(process.env.LOOP_CPU_LOOPS ?? 3000);
const WARM_UP_LOOPS = Number(process.env.LOOP_CPU_WARM_UP_LOOPS ?? 3000);
const RUNS = Number(process.env.LOOP_CPU_RUNS ?? 3);
const CONSOLE = process.env.LOOP_CPU_CONSOLE ?? "on";
const AGAINST = process.env.LOOP_CPU_AGAINST?.split(",").filter(Boolean) ?? [];
const DATABASE = process.env.LOOP_CPU_DATABASE;
const GENERATOR_PROFILE = process.env.LOOP_CPU_GENERATOR_PROFILE;
const AGENTS = 100;

for (const kind of KINDS) if (kind !== "http" && kind !== "sdk") throw new Error(`LOOP_CPU_KINDS: "${kind}" is neither http nor sdk`);
if (CONSOLE === "on" && !existsSync(".next/BUILD_ID")) throw new Error("the console is not built: run `npx next build` first, or LOOP_CPU_CONSOLE=off");
if (AGAINST.length && DATABASE) throw new Error("LOOP_CPU_AGAINST runs several servers, each on an embedded database of its own; leave LOOP_CPU_DATABASE unset");

/** `count` loops shared by AGENTS agents looping at once; the CPU they cost the server, its database and this process. */
async function cpuOf(server: BenchServer, loop: (agent: number) => Promise<void>, count: number): Promise<LoopCpu> {
  let started = 0;
  const window = cpuWindow(server);
  await Promise.all(
    Array.from({ length: AGENTS }, async (_, agent) => {
      while (started < count) {
        started += 1;
        await loop(agent);
      }
    }),
  );
  return window.end(count);
}

/** A run's figures on one line. */
function describe(cpu: LoopCpu): string {
  const postgres = cpu.postgresMsPerLoop === undefined ? "" : `, PostgreSQL ${cpu.postgresMsPerLoop.toFixed(3)}`;
  return `server ${cpu.serverMsPerLoop!.toFixed(3)} ms CPU per loop (main thread ${((cpu.serverMainThreadBusy! * cpu.wallMs) / cpu.loops).toFixed(3)} ms, ${cpu.serverMainThreadBusy!.toFixed(2)} busy)${postgres}, load generator ${cpu.generatorMsPerLoop.toFixed(3)} (event-loop delay p99 ${cpu.generatorLoopDelayP99Ms.toFixed(1)} ms); ${(cpu.loops / (cpu.wallMs / 1000)).toFixed(0)} loops/s`;
}

/** Runs `measured` under V8's CPU profiler when LOOP_CPU_GENERATOR_PROFILE names a directory, writing the profile there as `name`.cpuprofile. */
async function profiled<T>(name: string, measured: () => Promise<T>): Promise<T> {
  if (!GENERATOR_PROFILE) return measured();
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  try {
    return await measured();
  } finally {
    const { profile } = await session.post("Profiler.stop");
    session.disconnect();
    await mkdir(GENERATOR_PROFILE, { recursive: true });
    await writeFile(path.join(GENERATOR_PROFILE, `${name}.cpuprofile`), JSON.stringify(profile));
  }
}

const report = (text: string) => console.error(`loop-cpu: ${text}`);
const builds = [{ name: "this checkout", bundle: undefined as string | undefined }, ...AGAINST.map((bundle) => ({ name: bundle, bundle }))];
const sides = await Promise.all(
  builds.map(async (build) => {
    const server = await startBenchServer(DATABASE, { bundle: build.bundle, env: { TOLLGATE_CONSOLE: CONSOLE } });
    const operator = await connectOperator(server);
    return { ...build, server, operator, perLoop: new Map<LoopKind, LoopCpu[]>(KINDS.map((kind) => [kind, []])) };
  }),
);
try {
  for (const kind of KINDS) {
    for (const side of sides) {
      const agents = await loopingAgents(side.server, side.operator, kind, report);
      report(`${side.name}, ${kind}: ${WARM_UP_LOOPS} loops of warm-up`);
      await cpuOf(side.server, (agent) => agents.loop(agent), WARM_UP_LOOPS);
      agents.close();
    }
    for (let run = 0; run < RUNS; run++) {
      // The builds' order alternates run by run, so a drift in the machine's speed falls on both.
      for (const side of run % 2 ? [...sides].reverse() : sides) {
        const agents = await loopingAgents(side.server, side.operator, kind, report);
        const cpu = await profiled(`generator-${kind}-${sides.indexOf(side)}-run${run + 1}`, () => cpuOf(side.server, (agent) => agents.loop(agent), LOOPS));
        agents.close();
        side.perLoop.get(kind)!.push(cpu);
        report(`${side.name}, ${kind}, run ${run + 1}: ${describe(cpu)}`);
      }
    }
  }
  console.log(`CPU ms per full loop (${AGENTS} agents, ${LOOPS} loops a run, console ${CONSOLE}, ${DATABASE ? "PostgreSQL" : "embedded database"}): median (runs)`);
  const figure = (runs: LoopCpu[], of: (cpu: LoopCpu) => number) => {
    const values = runs.map(of);
    return `${percentile(values, 50).toFixed(3)} (${values.map((value) => value.toFixed(3)).join(", ")})`;
  };
  for (const side of sides) {
    for (const [kind, runs] of side.perLoop) {
      console.log(`  ${side.name}, ${kind === "http" ? "plain HTTP" : "SDK"}: server ${figure(runs, (cpu) => cpu.serverMsPerLoop!)}`);
      if (DATABASE) console.log(`    PostgreSQL's backends ${figure(runs, (cpu) => cpu.postgresMsPerLoop!)}`);
      console.log(`    load generator (this process) ${figure(runs, (cpu) => cpu.generatorMsPerLoop)}; server's main thread busy ${figure(runs, (cpu) => cpu.serverMainThreadBusy!)}`);
    }
  }
} finally {
  for (const side of sides) {
    side.operator.close();
    await side.server.stop();
  }
}
process.exit(0);
