// The CPU time a process has used so far (user and system, all its threads),
// read from /proc/<pid>/stat: what the server costs per call or per loop,
// measured from outside it, so the product needs no endpoint for it. CPU time
// holds on a loaded machine where wall-clock rates do not.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

let ticksPerSecond: number | undefined;

/** Milliseconds of CPU the process `pid` has used since it started. */
export function processCpuMs(pid: number): number {
  ticksPerSecond ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) is in parentheses and may hold spaces: count fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 14 and 15 of proc(5), utime and stime, are the 12th and 13th after the name.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks / ticksPerSecond) * 1000;
}
