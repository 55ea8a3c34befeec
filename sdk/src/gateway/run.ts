// One gateway process is one run: a Tollgate session with one task and its
// root request, under which each tool call is a child request of its own.
// - With the run id it was given (--run-id), the run is a durable run of
//   Tollgate's (run.begin, scoped to the agent key): a gateway started again
//   continues its root request, and a call it is asked again (same tool and
//   arguments) finds the approval the dead gateway was waiting on instead of
//   asking twice. One gateway drives a run at a time (the run's lease); one
//   started in place of a dead one takes the run over at once.
// - Without one, the run's ids are kept in a small file, named by a hash of
//   the server's URL, the agent key and a run id derived from the agent name
//   and the working folder: a gateway started again there cancels what the
//   dead one left pending (nobody waits on it any more) and starts a new run.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import type { Tollgate } from "../index.ts";

export interface RunIds {
  sessionId: string;
  taskId: string;
  rootRequestId: string;
}

export interface RunOptions {
  tollgate: Tollgate;
  url: string;
  apiKey: string;
  agent: string;
  /** Given by the user: a restarted gateway takes the run over. */
  runId?: string;
  /** The replica id of a dead gateway of this run, this one started in its place: it takes the run over at once. */
  replacing?: string;
  sessionTitle?: string;
  /** Where runs are remembered (default $XDG_STATE_HOME/tollgate-mcp or ~/.local/state/tollgate-mcp). */
  stateDir?: string;
  log: (line: string) => void;
}

export interface Run extends RunIds {
  /** True when this gateway took over a run begun by an earlier one (its calls may already be asked). */
  resumed: boolean;
  /** Ends the run's root request: the client has gone, and nothing of the run waits any more. */
  end(): Promise<void>;
}

interface Remembered extends RunIds {
  pid: number;
  /** The lease holder the gateway asked Tollgate as (its replica id). */
  holder?: string;
}

export function defaultStateDir(): string {
  return path.join(process.env.XDG_STATE_HOME || path.join(homedir(), ".local", "state"), "tollgate-mcp");
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * A process that is still alive (signal 0 only checks); a dead gateway's pid
 * is free, or another process's, or a zombie's: killed, but not yet reaped by
 * the client that started it, which signal 0 still finds.
 */
function alive(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  return !zombie(pid);
}

/** Linux says so in /proc (the state follows the parenthesised command name); elsewhere a zombie counts as alive. */
function zombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}

async function recall(file: string): Promise<Remembered | null> {
  try {
    const saved = JSON.parse(await readFile(file, "utf8")) as Partial<Remembered>;
    if (typeof saved.sessionId === "string" && typeof saved.taskId === "string" && typeof saved.rootRequestId === "string") return saved as Remembered;
  } catch {
    // No run remembered (or a file cut short by a crash): start a new one.
  }
  return null;
}

/**
 * The replica id a gateway of this run that died here asked as: one started
 * again with the run id replaces it, taking the run over at once instead of
 * being refused until the dead one's lease lapses. A live gateway's is never
 * given: a second one is refused, as it should be.
 */
export async function holderOfDeadGateway(file: string): Promise<string | undefined> {
  const earlier = await recall(file);
  return earlier?.holder && !alive(earlier.pid) ? earlier.holder : undefined;
}

async function remember(file: string, ids: RunIds & { holder?: string }): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  // Written whole, then renamed over the old one: a crash leaves one or the other.
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, JSON.stringify({ ...ids, pid: process.pid }), { mode: 0o600 });
  await rename(partial, file);
}

/** The run's file in the state folder: the key is hashed into the name, never written, so two keys never share a run. */
export function runStateFile(options: Pick<RunOptions, "url" | "apiKey" | "stateDir">, runId: string): string {
  return path.join(options.stateDir ?? defaultStateDir(), `${sha256(`${options.url}\n${sha256(options.apiKey)}\n${runId}`).slice(0, 32)}.json`);
}

/** Begins this gateway's run, or takes over (or cleans up after) the one a dead gateway left. */
export async function openRun(options: RunOptions): Promise<Run> {
  const { tollgate } = options;
  const runId = options.runId ?? `${options.agent}@${process.cwd()}`;
  const file = runStateFile(options, runId);
  const earlier = await recall(file);
  const openSession = () => tollgate.openSession({ title: options.sessionTitle ?? `MCP: ${options.agent}`, metadata: { gateway: "tollgate-mcp", agent: options.agent } });

  if (options.runId !== undefined) {
    // The session is the earlier one's when this machine remembers it; a continued run keeps its own anyway.
    const sessionId = earlier?.sessionId ?? (await openSession()).sessionId;
    const run = await tollgate.beginRun({ runId: options.runId, sessionId, agent: options.agent, kind: "orchestrator", framework: "mcp", replacing: options.replacing });
    const ids = { sessionId: run.sessionId, taskId: run.taskId, rootRequestId: run.requestId };
    await remember(file, { ...ids, holder: tollgate.replicaId });
    if (run.continued) options.log(`tollgate-mcp: run "${options.runId}" continued (session ${run.sessionId})`);
    return { ...ids, resumed: run.continued, end: async () => void (await run.complete()) };
  }
  if (earlier && !alive(earlier.pid)) {
    // Nobody waits on what the dead gateway asked: its client went with it.
    await tollgate
      .call("task.cancelAsAgent", { taskId: earlier.taskId, reason: "the MCP gateway that asked stopped; its client is gone" })
      .then((canceled) => options.log(`tollgate-mcp: canceled ${canceled.canceledRequests} request(s) a stopped gateway left in session ${earlier.sessionId}`))
      .catch((error: Error) => options.log(`tollgate-mcp: could not cancel what a stopped gateway left: ${error.message}`));
  }

  const { sessionId } = await openSession();
  const root = await tollgate.call("request.begin", { sessionId, agent: options.agent, kind: "orchestrator", framework: "mcp", input: { runId } });
  const ids = { sessionId, taskId: root.taskId, rootRequestId: root.requestId };
  await remember(file, ids);
  return { ...ids, resumed: false, end: async () => void (await tollgate.call("request.complete", { requestId: root.requestId })) };
}
