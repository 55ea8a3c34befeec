// The CPU time processes have used (user and system), read from /proc: what
// the server, its database and the benchmark's own process cost per call or
// per loop, measured from outside the server, so the product needs no
// endpoint for it. CPU time holds on a loaded machine where wall-clock rates
// do not.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";

let ticksPerSecond: number | undefined;

/** Milliseconds of CPU in a /proc stat file (utime + stime). */
function statCpuMs(file: string): number {
  ticksPerSecond ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  const stat = readFileSync(file, "utf8");
  // The command name (field 2) is in parentheses and may hold spaces: count fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 14 and 15 of proc(5), utime and stime, are the 12th and 13th after the name.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks / ticksPerSecond) * 1000;
}

/** Milliseconds of CPU the process `pid` has used since it started, all its threads. */
export function processCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/** Milliseconds of CPU the main thread of process `pid` has used: for Node, the thread that runs its JavaScript. */
export function mainThreadCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/task/${pid}/stat`);
}

/**
 * CPU milliseconds of each PostgreSQL backend process serving `database`, by
 * pid: a local server's backends are titled `postgres: [<cluster>: ]<user>
 * <database> <client> <state>` (the server's pool keeps its connections, so
 * the same pids span a window). PostgreSQL's shared processes (WAL writer,
 * checkpointer) serve every database on the server and are left out.
 */
const backendTitle = /^postgres: (?:\S+: )?\S+ (\S+) /;

function postgresBackendsCpuMs(database: string): Map<number, number> {
  const backends = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const title = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (backendTitle.exec(title)?.[1] === database) backends.set(Number(entry), processCpuMs(Number(entry)));
    } catch {
      // the process ended while the list was read
    }
  }
  return backends;
}

/** What a window of load cost each side, per loop. */
export interface LoopCpu {
  loops: number;
  wallMs: number;
  /** The benchmark's own process (the agents and the operator, or LangGraph's threads), all its threads. */
  generatorMsPerLoop: number;
  /** The 99th percentile of the benchmark's event-loop delay: how late its agents could hear their answers (NaN when the loop never came round to measure it, as under LangGraph's in-process loops). */
  generatorLoopDelayP99Ms: number;
  /** The server's process, all its threads (none for a load without a server). */
  serverMsPerLoop?: number;
  /** The server's main thread's CPU over the wall time: near 1, that thread is what bounds the rate. */
  serverMainThreadBusy?: number;
  /** The PostgreSQL backends of the server's database; none on the embedded database, which runs in the server. */
  postgresMsPerLoop?: number;
}

/** Starts measuring what this process and, if given, a server (and its PostgreSQL database's backends) spend; `end(loops)` gives it per loop. */
export function cpuWindow(server?: { pid: number; databaseName?: string }): { end(loops: number): LoopCpu } {
  const started = performance.now();
  const generator = process.cpuUsage();
  const serverMs = server && processCpuMs(server.pid);
  const serverMainMs = server && mainThreadCpuMs(server.pid);
  const postgres = server?.databaseName === undefined ? undefined : postgresBackendsCpuMs(server.databaseName);
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  return {
    end(loops) {
      loopDelay.disable();
      const wallMs = performance.now() - started;
      const { user, system } = process.cpuUsage(generator);
      const figures: LoopCpu = { loops, wallMs, generatorMsPerLoop: (user + system) / 1000 / loops, generatorLoopDelayP99Ms: loopDelay.count ? loopDelay.percentile(99) / 1e6 : Number.NaN };
      if (server) {
        figures.serverMsPerLoop = (processCpuMs(server.pid) - serverMs!) / loops;
        figures.serverMainThreadBusy = (mainThreadCpuMs(server.pid) - serverMainMs!) / wallMs;
      }
      if (postgres) {
        // A backend that started inside the window spent all its CPU in it.
        let postgresMs = 0;
        for (const [pid, ms] of postgresBackendsCpuMs(server!.databaseName!)) postgresMs += ms - (postgres.get(pid) ?? 0);
        figures.postgresMsPerLoop = postgresMs / loops;
      }
      return figures;
    },
  };
}
