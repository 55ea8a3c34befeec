// An agent run as its own process, for the durable-run tests: started with a
// script and its environment, watched line by line, killed the hard way.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { setTimeout as delay } from "node:timers/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { createTollgate } from "../sdk/src/index.ts";
import type { OperatorClient } from "./clients.ts";
import { AGENT_KEY } from "./harness.ts";
import { nodeScript } from "./node-script.ts";
import { useTestServer, type TestServer } from "./server.ts";

export interface AgentProcess {
  /** Resolves with the first line of output that matches (seen already or still to come). */
  line(pattern: RegExp): Promise<string>;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  kill(): Promise<void>;
  output(): string;
}

/** Starts `script` under node: a TypeScript fixture bundled first (test/node-script.ts), JavaScript as users run it. */
export function startAgent(script: string, env: Record<string, string>): AgentProcess {
  const child: ChildProcess = spawn(process.execPath, [nodeScript(script)], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const watchers = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk;
    for (const watcher of [...watchers]) watcher();
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    exited,
    output: () => output,
    line(pattern) {
      return new Promise((resolve, reject) => {
        const look = () => {
          const found = output.split("\n").find((line) => pattern.test(line));
          if (found === undefined) return false;
          watchers.delete(look);
          resolve(found);
          return true;
        };
        if (look()) return;
        watchers.add(look);
        void exited.then(() => {
          if (watchers.delete(look) && !look()) reject(new Error(`the agent exited without printing ${pattern}:\n${output}`));
        });
      });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/**
 * Waits for `step` (a restarted agent's line, its exit, a tool call's answer)
 * while watching the approvals of one call: a second ask fails the test at
 * once, saying so, instead of leaving the step to wait for a decision nobody
 * makes. Counted once more after the step, for an ask just before it settled.
 */
export async function withOneApproval<T>(approvals: () => Promise<readonly unknown[]>, step: Promise<T>): Promise<T> {
  const exactlyOne = async () => {
    const seen = (await approvals()).length;
    if (seen !== 1) throw new Error(`expected exactly one approval for this call, saw ${seen}`);
  };
  const stopped = new AbortController();
  const watching = (async (): Promise<never> => {
    for (;;) {
      await exactlyOne();
      await delay(200, undefined, { signal: stopped.signal });
    }
  })();
  // Once the step has settled, the watch's end (aborted, or a count read too late) is nobody's to hear.
  watching.catch(() => undefined);
  try {
    await Promise.race([step, watching]);
  } finally {
    stopped.abort();
  }
  await exactlyOne();
  return step;
}

/**
 * Runs of one agent script for the durable-run tests: each with its own
 * session, runId and tool log (one JSON line per run of the tool, in any
 * process); `start` starts one process of it.
 */
export function durableRuns(script: string, server: () => { url: string; agentKey: string; dir: string; operator: OperatorClient }, started: AgentProcess[] = []) {
  let count = 0;
  return async function newRun() {
    const { url, agentKey, dir, operator } = server();
    const n = ++count;
    const tollgate = createTollgate({ url, apiKey: agentKey, push: false });
    const { sessionId } = await tollgate.openSession({ title: `durable run ${n}` });
    tollgate.close();
    const toolLog = path.join(dir, `tool-${n}.log`);
    const runId = `run-${n}`;
    const env = { TOLLGATE_URL: url, TOLLGATE_AGENT_KEY: agentKey, SESSION_ID: sessionId, RUN_ID: runId, CHECKPOINTS: path.join(dir, `checkpoints-${n}.sqlite`), TOOL_LOG: toolLog };
    const list = async () => (await operator.approval.list.query({ sessionId, limit: 100 })).items;
    return {
      runId,
      sessionId,
      start: (more: Record<string, string> = {}) => {
        const agent = startAgent(script, { ...env, ...more });
        started.push(agent);
        return agent;
      },
      toolRuns: async () =>
        (await readFile(toolLog, "utf8").catch(() => ""))
          .split("\n")
          .filter(Boolean)
          .map((line) => JSON.parse(line) as { args: unknown; idempotencyKey?: string }),
      approvals: list,
      /** Waits for `step` of a restarted process; a second approval in the run's session fails it at once (see withOneApproval). */
      withOneApproval: <T>(step: Promise<T>) => withOneApproval(list, step),
      /** Resolves once the tool has been run (a line in the tool log), however long a loaded machine takes. */
      async toolStarted() {
        while ((await readFile(toolLog, "utf8").catch(() => "")).trim() === "") await new Promise((resolve) => setTimeout(resolve, 100));
      },
      /** The run's one approval, once it has been asked for. */
      async asked() {
        // Bounded by the test's own timeout: a loaded machine starts an agent process slowly.
        for (;;) {
          const approvals = await list();
          if (approvals.length > 0) {
            expect(approvals).toHaveLength(1);
            return approvals[0]!;
          }
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      },
    };
  };
}

/** What a durable-run test file works with, set before its first test. */
export interface DurableTestSetup {
  test: TestServer;
  operator: OperatorClient;
  /** A scratch folder for the file's runs (tool logs, checkpoints), removed after it. */
  dir: string;
  /** Starts a new run of the file's agent script (see durableRuns). */
  newRun: ReturnType<typeof durableRuns>;
}

/**
 * One server (with `serverEnv` over the tests' settings) and one scratch
 * folder for a durable-run test file, and runs of `script` on them; a test's
 * agents still running after it are killed.
 */
export function useDurableRuns(script: string, name: string, serverEnv: Record<string, string> = {}): DurableTestSetup {
  const setup = {} as DurableTestSetup;
  const started: AgentProcess[] = [];
  afterEach(async () => {
    for (const agent of started.splice(0)) await agent.kill();
  });
  useTestServer((started, loggedIn) => {
    setup.test = started;
    setup.operator = loggedIn;
  }, serverEnv);
  beforeAll(async () => {
    setup.dir = await mkdtemp(path.join(tmpdir(), `tollgate-durable-${name}-`));
  });
  afterAll(async () => {
    if (setup.dir) await rm(setup.dir, { recursive: true, force: true });
  });
  setup.newRun = durableRuns(script, () => ({ url: setup.test.url, agentKey: AGENT_KEY, dir: setup.dir, operator: setup.operator }), started);
  return setup;
}
