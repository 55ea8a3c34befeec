// Two node processes on PostgreSQL with a Redis of the test's own between them,
// behind a small round-robin balancer as in production. Redis is restarted in
// the middle of a run, and both nodes are restarted one after the other while
// agents keep asking and an operator keeps deciding: nothing is lost, nothing
// is decided or run twice.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createProxyServer } from "http-proxy-3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentSdk, operatorClient, type OperatorClient } from "../clients.ts";
import { freePort } from "../databases.ts";
import { createEmptyPostgresDatabase, TEST_TARGET } from "../harness.ts";
import { serverProcess, type ServerProcess } from "../process.ts";
import { describeWith, firstMissing, needsPostgres } from "../requires.ts";

const onPostgres = TEST_TARGET === "postgres";
const redisInstalled = onPostgres && (await new Promise<boolean>((resolve) => spawn("redis-server", ["--version"]).on("exit", (code) => resolve(code === 0)).on("error", () => resolve(false))));

/** A Redis server of this test's own, so it can be stopped and started again on the same port. */
function ownRedis(port: number) {
  let child: ChildProcess | undefined;
  return {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      await new Promise<void>((resolve, reject) => {
        child!.stdout!.on("data", (chunk) => {
          output += chunk;
          if (output.includes("Ready to accept connections")) resolve();
        });
        child!.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
      });
    },
    async stop() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child!.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Round-robin over the nodes, WebSockets included; a node that is down answers 502, which clients retry. */
async function balancer(targets: () => string[]): Promise<{ url: string; close(): Promise<void> }> {
  const proxy = createProxyServer({ ws: true, xfwd: true });
  proxy.on("error", (_error, _req, res) => {
    if ("writeHead" in res && !res.headersSent) res.writeHead(502).end("node unavailable");
    else res.destroy();
  });
  let next = 0;
  const pick = () => targets()[next++ % targets().length]!;
  const server: Server = createServer((req, res) => proxy.web(req, res, { target: pick() }));
  server.on("upgrade", (req, socket, head) => proxy.ws(req, socket, head, { target: pick() }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        // Clients' kept-alive connections and sockets would hold close() open.
        server.closeAllConnections();
      }),
  };
}

/** Fails with `what` when `work` takes longer than `ms`, instead of leaving the test to time out saying nothing. */
function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms / 1000} s`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Retries what a load balancer's client retries: a call that never reached a node. */
async function untilReached<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const code = (error as { data?: { code?: string } }).data?.code;
      if (code !== undefined || attempt > 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

let redis: ReturnType<typeof ownRedis>;
let nodes: ServerProcess[] = [];
let front: Awaited<ReturnType<typeof balancer>>;
let dropDatabase: (() => Promise<void>) | undefined;

beforeAll(async () => {
  if (!redisInstalled) return;
  redis = ownRedis(await freePort());
  await redis.start();
  const database = await createEmptyPostgresDatabase();
  dropDatabase = database.drop;
  const env = { REDIS_URL: redis.url, TOLLGATE_SECRET: `restarts-test-secret-${"z".repeat(32)}`, TOLLGATE_DRAIN_SECONDS: "3" };
  nodes = [await serverProcess({ databaseUrl: database.url, env }), await serverProcess({ databaseUrl: database.url, env })];
  for (const node of nodes) await node.start();
  front = await balancer(() => nodes.map((node) => node.url));
}, 120_000);

afterAll(async () => {
  if (!redisInstalled) return;
  await front?.close();
  await Promise.all(nodes.map((node) => node.cleanup()));
  await redis?.stop();
  await dropDatabase?.();
});

describeWith(firstMissing(needsPostgres(), redisInstalled ? undefined : { reason: "needs the redis-server program (Debian package redis-server)", service: true }))("restarts under way", () => {
  it("multi-node: Redis restarted mid-run: readiness says so, logins go on, pushes across nodes resume, and clients told to read again miss nothing", async () => {
    const [a, b] = nodes as [ServerProcess, ServerProcess];
    const agent = agentSdk(a.url, undefined, { push: true });
    const operatorOnB = await operatorClient(b.url);
    const { sessionId } = await agent.openSession({ title: "redis restart" });
    const ask = async (tool: string) => {
      const begun = await agent.begin({ sessionId, agent: "restarts" });
      return (await agent.call("approval.request", { requestId: begun.requestId, tool, args: {} })).approvalId;
    };

    // Before: a decision on B reaches the agent held on A.
    const before = await ask("before");
    const waiting = agent.waitForDecision(before);
    await operatorOnB.approval.decide.mutate({ approvalId: before, action: "approve" });
    expect((await waiting).status).toBe("APPROVED");

    // Redis goes away: the nodes say they are not ready, and keep serving.
    await redis.stop();
    await expect.poll(async () => (await fetch(`${a.url}/readyz`)).status, { timeout: 10_000 }).toBe(503);
    // Logging in still works, throttled in each node's memory until Redis returns.
    expect((await (await operatorClient(a.url)).auth.me.query()).operator.role).toBe("ADMIN");
    const during = await ask("during");
    const missed = agent.waitForDecision(during);
    await operatorOnB.approval.decide.mutate({ approvalId: during, action: "approve" });

    // Redis is back: A's clients are told to read again, so the decision made
    // on B while the link was down arrives well before the SDK's 10 s poll.
    const restartedAt = Date.now();
    await redis.start();
    await expect.poll(async () => (await fetch(`${a.url}/readyz`)).status, { timeout: 15_000 }).toBe(200);
    expect((await missed).status).toBe("APPROVED");
    expect(Date.now() - restartedAt).toBeLessThan(9_000);

    // And pushes across nodes work as before.
    const after = await ask("after");
    const pushed = agent.waitForDecision(after);
    await operatorOnB.approval.decide.mutate({ approvalId: after, action: "reject", message: "after the restart" });
    expect((await pushed).status).toBe("REJECTED");
    agent.close();
  }, 120_000);

  it("multi-node: a rolling restart of both nodes under load loses nothing and decides nothing twice", async () => {
    const AGENTS = 6;
    // Behind a balancer a node may refuse for a few seconds while it restarts: retry for longer than that.
    const agents = Array.from({ length: AGENTS }, () => agentSdk(front.url, undefined, { push: true, networkRetries: 30 }));
    const operator: OperatorClient = await untilReached(() => operatorClient(front.url));
    const { sessionId } = await untilReached(() => agents[0]!.openSession({ title: "rolling restart" }));

    let running = true;
    let runs = 0;
    const asked: string[] = [];
    const stopOnFailure = (error: unknown) => {
      running = false;
      throw error;
    };
    const agentLoops = agents.map(async (sdk, index) => {
      while (running) {
        const begun = await sdk.begin({ sessionId, agent: `agent-${index}` });
        const outcome = await begun.gate("rolling_tool", { index }, () => ++runs);
        asked.push(outcome.approvalId);
        expect(outcome.outcome).toBe("executed");
        await begun.complete({ ok: true });
      }
    });
    // The operator decides until every agent has stopped: an agent still asking
    // when the run is told to stop gets its decision too.
    let agentsStopped = false;
    const agentsDone = Promise.all(agentLoops.map((loop) => loop.catch(stopOnFailure))).finally(() => (agentsStopped = true));
    const deciderLoop = (async () => {
      while (!agentsStopped) {
        const pending = await untilReached(() => operator.approval.list.query({ status: "PENDING", limit: 50 }));
        for (const approval of pending.items) {
          // A retry after the answer was lost to a restart gets the same decision back, never a second one.
          const result = await untilReached(() => operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "approve" }));
          expect(result.status).toBe("APPROVED");
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })().catch(stopOnFailure);

    const roundTripsSoFar = () => asked.length;
    const progressedBy = async (count: number) => {
      await expect.poll(() => (running ? roundTripsSoFar() : Infinity), { timeout: 60_000 }).toBeGreaterThanOrEqual(count);
      // A loop that failed stopped the run: report its error rather than a timeout.
      if (!running) await Promise.all([agentsDone, deciderLoop]);
    };
    await progressedBy(10);
    for (const node of nodes) {
      // SIGTERM: the node drains (stops accepting, finishes what it holds, tells sockets to go elsewhere) and exits.
      const before = roundTripsSoFar();
      expect(await within(30_000, "a node's exit after SIGTERM (it drains for 3 s)", node.kill("SIGTERM"))).toBe(0);
      await progressedBy(before + 5);
      await within(60_000, "a node's start", node.start());
      await progressedBy(roundTripsSoFar() + 5);
    }
    running = false;
    await within(60_000, "the agents' last round trips", agentsDone);
    await within(10_000, "the operator's last decisions", deciderLoop);
    for (const sdk of agents) sdk.close();

    // Every approval asked was decided once, run once, and its request completed.
    expect(asked.length).toBeGreaterThanOrEqual(30);
    expect(new Set(asked).size).toBe(asked.length);
    expect(runs).toBe(asked.length);
    const log = await operator.audit.list.query({ action: "approval.decided", limit: 1000 });
    const decisions = log.items.filter((entry) => asked.includes(entry.subjectId));
    expect(decisions).toHaveLength(asked.length);
    expect((await operator.approval.list.query({ status: "PENDING" })).total).toBe(0);
    expect((await operator.audit.verify.query()).ok).toBe(true);
  }, 300_000);
});
