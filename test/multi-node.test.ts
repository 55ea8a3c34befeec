// Two server nodes on one PostgreSQL, hearing each other through Redis or,
// without Redis, through PostgreSQL LISTEN/NOTIFY: pushes reach an operator
// connected to the other node, a long-poll wakes when the other node commits
// the decision, a logout on one node closes the sockets held by the other, and
// of two decisions sent to two nodes exactly one wins.
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { io } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEnv } from "../server/env.ts";
import { startServer, type RunningServer } from "../server/http.ts";
import { setLogLevel } from "../server/log.ts";
import { addPerson, agentSdk, operatorClient } from "./clients.ts";
import { ADMIN, AGENT_KEY, createEmptyPostgresDatabase, TEST_TARGET } from "./harness.ts";
import { describeWith, firstMissing, needsPostgres, needsRedis, REDIS_URL, redisAnswers } from "./requires.ts";

const redisUp = TEST_TARGET === "postgres" && (await redisAnswers());

/** Two nodes on a fresh PostgreSQL database; with `redisUrl`, Redis carries their events. */
function useTwoNodes(redisUrl: string | undefined): () => [RunningServer, RunningServer] {
  let nodes: RunningServer[] = [];
  let dropDatabase: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    setLogLevel("warn");
    const database = await createEmptyPostgresDatabase();
    dropDatabase = database.drop;
    // Every node must read the receipt signing key the first one stored.
    const secret = `multi-node-test-secret-${"x".repeat(32)}`;
    for (let i = 0; i < 2; i++) {
      const env = parseEnv({
        PORT: "0",
        HOST: "127.0.0.1",
        DATABASE_URL: database.url,
        // A channel of this database's: another checkout's run on the same Redis is not heard.
        ...(redisUrl ? { REDIS_URL: redisUrl, TOLLGATE_REDIS_CHANNEL: `tollgate:test:${new URL(database.url).pathname.slice(1)}:events` } : {}),
        TOLLGATE_DATA_DIR: await mkdtemp(path.join(tmpdir(), "tollgate-node-")),
        TOLLGATE_ADMIN_EMAIL: ADMIN.email,
        TOLLGATE_ADMIN_PASSWORD: ADMIN.password,
        TOLLGATE_AGENT_KEY: AGENT_KEY,
        TOLLGATE_SECRET: secret,
      });
      nodes.push(await startServer({ env, withConsole: false }));
    }
  });
  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.close()));
    nodes = [];
    await dropDatabase?.();
  });
  return () => nodes as [RunningServer, RunningServer];
}

async function operatorSocket(url: string) {
  const login = await fetch(`${url}/api/trpc/auth.login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ADMIN) });
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
  const socket = io(url, { auth: { token: cookie.split("=")[1]! }, transports: ["websocket"], reconnection: false });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("connect_error", reject);
  });
  return { socket, cookie };
}

for (const [transport, redisUrl] of [
  ["Redis", REDIS_URL],
  ["PostgreSQL LISTEN/NOTIFY", undefined],
] as const) {
  describeWith(firstMissing(needsPostgres(), redisUrl === undefined ? undefined : needsRedis(redisUp, REDIS_URL)))(`several nodes, events through ${transport}`, () => {
    const nodes = useTwoNodes(redisUrl);

    it("multi-node: an approval requested on node B is pushed to an operator on node A, and a decision on B wakes a long-poll on A", async () => {
      const [a, b] = nodes();
      const { socket } = await operatorSocket(a.url);
      try {
        const onB = agentSdk(b.url);
        const { sessionId } = await onB.openSession({});
        const begun = await onB.begin({ sessionId, agent: "mailer" });
        const pushed = new Promise<{ approvalId: string }>((resolve) => socket.once("approval:requested", resolve));
        const asked = await onB.call("approval.request", { requestId: begun.requestId, tool: "send", args: {} });
        expect((await pushed).approvalId).toBe(asked.approvalId);

        const onA = agentSdk(a.url);
        const started = Date.now();
        const waiting = onA.call("approval.await", { approvalId: asked.approvalId, timeoutMs: 30_000 });
        // Decide only once the long-poll is really waiting on node A.
        await expect.poll(() => a.deps.waiters.size).toBe(1);
        const operatorOnB = await operatorClient(b.url);
        await operatorOnB.approval.decide.mutate({ approvalId: asked.approvalId, action: "approve" });
        expect(await waiting).toMatchObject({ status: "APPROVED" });
        // Woken by the decision, well before its 30 s timeout (the bound leaves room for a busy machine).(the bound leaves room for a busy machine).
        expect(Date.now() - started).toBeLessThan(20_000);
      } finally {
        socket.close();
      }
    });

    it("multi-node: two decisions sent to two nodes at once — exactly one wins", async () => {
      const [a, b] = nodes();
      const sdk = agentSdk(a.url);
      const { sessionId } = await sdk.openSession({});
      const begun = await sdk.begin({ sessionId, agent: "mailer" });
      const asked = await sdk.call("approval.request", { requestId: begun.requestId, tool: "send", args: {} });
      const [operatorA, operatorB] = await Promise.all([operatorClient(a.url), operatorClient(b.url)]);
      const results = await Promise.allSettled([
        operatorA.approval.decide.mutate({ approvalId: asked.approvalId, action: "approve" }),
        operatorB.approval.decide.mutate({ approvalId: asked.approvalId, action: "reject", message: "no" }),
      ]);
      expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
      expect((await operatorA.audit.list.query({ subjectId: asked.approvalId })).items).toHaveLength(1);
    });

    it("multi-node: revoking an agent key on node A refuses its very next call on node B, where it was cached, and closes its socket there", async () => {
      const [a, b] = nodes();
      const { id, key } = await (await operatorClient(a.url)).agentKey.create.mutate({ name: "revoked-across-nodes" });
      const onB = agentSdk(b.url, key);
      await onB.openSession({});
      const socket = io(b.url, { auth: { agentKey: key }, transports: ["websocket"], reconnection: false });
      await new Promise<void>((resolve, reject) => {
        socket.once("connect", () => resolve());
        socket.once("connect_error", reject);
      });
      const closed = new Promise<string>((resolve) => socket.once("disconnect", resolve));
      await (await operatorClient(a.url)).agentKey.revoke.mutate({ keyId: id });
      // Node B heard of it: it closed the socket; the cached key is gone with it.
      expect(await closed).toBe("io server disconnect");
      await expect(onB.openSession({})).rejects.toMatchObject({ data: { code: "UNAUTHORIZED" } });
      onB.close();
    });

    it("multi-node: demoting an operator on node A applies to their next call on node B, where their session was remembered", async () => {
      const [a, b] = nodes();
      const adminOnA = await operatorClient(a.url);
      const email = `demoted-${Math.random().toString(36).slice(2, 8)}@example.com`;
      const password = "demoted operator password";
      const { id } = await addPerson(a.url, adminOnA, { email, name: "Demoted", role: "OPERATOR", password });
      const onB = await operatorClient(b.url, { email, password });
      expect((await onB.auth.me.query()).operator.role).toBe("OPERATOR");
      const heardOnB = new Promise<void>((resolve) => {
        const stop = b.deps.bus.on("operator:changed", ({ operatorId }) => {
          if (operatorId !== id) return;
          stop();
          resolve();
        });
      });
      await adminOnA.operator.setRole.mutate({ operatorId: id, role: "VIEWER" });
      // Once node B has heard of it (as fast as the bridge carries events), the remembered session is gone.
      await heardOnB;
      expect((await onB.auth.me.query()).operator.role).toBe("VIEWER");
      await expect(onB.approval.decideMany.mutate({ approvalIds: ["apr_0000000000000000000000"], action: "approve" })).rejects.toMatchObject({ data: { code: "FORBIDDEN" } });
    });

    it("multi-node: logging out on node B closes that session's socket held by node A", async () => {
      const [a, b] = nodes();
      const { socket, cookie } = await operatorSocket(a.url);
      const closed = new Promise<string>((resolve) => socket.once("disconnect", resolve));
      const logout = await fetch(`${b.url}/api/trpc/auth.logout`, { method: "POST", headers: { "content-type": "application/json", cookie, origin: b.url }, body: "{}" });
      expect(logout.status).toBe(200);
      expect(await closed).toBe("io server disconnect");
    });
  });
}

describeWith(firstMissing(needsPostgres(), needsRedis(redisUp, REDIS_URL)))("several nodes sharing Redis", () => {
  const nodes = useTwoNodes(REDIS_URL);

  it("multi-node: failed logins on one node throttle the account on the other (counters in Redis)", async () => {
    const [a, b] = nodes();
    const email = `guessed-${Date.now()}@example.com`;
    const guess = (node: RunningServer) =>
      fetch(`${node.url}/api/trpc/auth.login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password: "wrong" }) });
    // Five free failures, and a sixth that sets a wait of 1 s, all on A.
    for (let attempt = 0; attempt < 6; attempt++) expect((await guess(a)).status).toBe(401);
    // B refuses within that wait. On a busy machine a guess (a password hash) can
    // take longer than the wait, and then B's guess is counted instead and doubles
    // it; B alone, counting on its own, would let all of these through.
    const answers: number[] = [];
    let refused: Response | undefined;
    while (!refused && answers.length < 4) {
      const answer = await guess(b);
      answers.push(answer.status);
      if (answer.status === 429) refused = answer;
    }
    expect(answers.slice(0, -1).every((status) => status === 401), `B answered ${answers.join(", ")}`).toBe(true);
    expect(refused, `B answered ${answers.join(", ")}`).toBeDefined();
    // What is left of the wait the last counted guess set, in whole seconds.
    const retryAfter = Number(refused!.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2 ** (answers.length - 1));
  });
});
