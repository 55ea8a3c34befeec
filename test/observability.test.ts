// What a platform engineer sees of a node: readiness that names what is wrong,
// and Prometheus metrics that move with the work (decisions by outcome and by
// who decided, time to decision, API calls by procedure, pushes to agents,
// connections held).
import { io } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { log } from "../server/log.ts";
import { agentSdk, operatorClient } from "./clients.ts";
import { ADMIN } from "./harness.ts";
import { startTestServer, type TestServer } from "./server.ts";

const METRICS_TOKEN = "metrics-token-0123456789";
let test: TestServer;

beforeAll(async () => {
  test = await startTestServer({ TOLLGATE_METRICS_TOKEN: METRICS_TOKEN });
});
afterAll(() => test.close());

async function scrape(): Promise<string> {
  const response = await fetch(`${test.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

/** The value of one series, or 0 when it has not been written yet. */
function sample(text: string, series: string): number {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe("readiness", () => {
  it("readyz: 200 with each check named when the database answers and has this build's migrations", async () => {
    const response = await fetch(`${test.url}/readyz`);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.ready).toBe(true);
    expect(body.checks.database).toMatchObject({ ok: true, detail: expect.stringMatching(/^reachable; migrations applied up to \d{14}_/) });
  });

  it("readyz: 503 naming the migration when the database lacks one this build has", async () => {
    const prisma = test.server.database.prisma;
    const [newest] = await prisma.$queryRaw<{ migration_name: string }[]>`SELECT migration_name FROM _prisma_migrations ORDER BY migration_name DESC LIMIT 1`;
    await prisma.$executeRaw`UPDATE _prisma_migrations SET finished_at = NULL WHERE migration_name = ${newest!.migration_name}`;
    try {
      const response = await fetch(`${test.url}/readyz`);
      expect(response.status).toBe(503);
      expect((await response.json()).checks.database).toEqual({ ok: false, detail: expect.stringContaining(`migration ${newest!.migration_name} is not applied yet`) });
    } finally {
      await prisma.$executeRaw`UPDATE _prisma_migrations SET finished_at = now() WHERE migration_name = ${newest!.migration_name}`;
    }
  });
});

describe("draining", () => {
  it("readyz: a draining node says so with 503 while it still answers calls", async () => {
    const spare = await startTestServer();
    try {
      spare.server.drain();
      const response = await fetch(`${spare.url}/readyz`);
      expect(response.status).toBe(503);
      expect((await response.json()).checks.draining).toEqual({ ok: false, detail: "shutting down: send new traffic to another node" });
      expect((await fetch(`${spare.url}/healthz`)).status).toBe(200);
    } finally {
      await spare.close();
    }
  });
});

describe("metrics", () => {
  it("metrics: refused without the configured token", async () => {
    expect((await fetch(`${test.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${test.url}/metrics`, { headers: { authorization: "Bearer wrong-token-0123456789" } })).status).toBe(401);
  });

  // The warning itself and which setting wins are server/observability/metrics-access.test.ts's.
  it("metrics: TOLLGATE_METRICS_WITHOUT_TOKEN=refuse closes /metrics of a production server without a token, which then warns of nothing", async () => {
    const warn = vi.spyOn(log, "warn");
    const closed = await startTestServer({ NODE_ENV: "production", TOLLGATE_METRICS_WITHOUT_TOKEN: "refuse" });
    try {
      expect(warn).not.toHaveBeenCalledWith(expect.stringMatching(/\/metrics is open/));
      const refused = await fetch(`${closed.url}/metrics`);
      expect(refused.status).toBe(403);
      expect(await refused.text()).toMatch(/set TOLLGATE_METRICS_TOKEN/);
    } finally {
      warn.mockRestore();
      await closed.close();
    }
  }, 120_000);

  it("metrics: pending approvals, decisions by outcome and decider, time to decision, calls by procedure and pushes move with the work", async () => {
    const before = await scrape();
    const workspace = test.server.bootstrap.workspaceId;
    const sdk = agentSdk(test.url);
    const operator = await operatorClient(test.url);
    const { sessionId } = await sdk.openSession({});
    const begun = await sdk.begin({ sessionId, agent: "metered" });
    const { approvalId } = await sdk.call("approval.request", { requestId: begun.requestId, tool: "send_email", args: {} });

    const waiting = await scrape();
    expect(sample(waiting, `tollgate_approvals_pending{workspace="${workspace}"}`)).toBe(sample(before, `tollgate_approvals_pending{workspace="${workspace}"}`) + 1);

    // A long-poll is waiting when the operator decides: the decision is pushed to it.
    const polled = sdk.call("approval.await", { approvalId, timeoutMs: 10_000 });
    await expect.poll(() => test.server.deps.waiters.size).toBe(1);
    await operator.approval.decide.mutate({ approvalId, action: "approve" });
    expect((await polled).status).toBe("APPROVED");

    const after = await scrape();
    const decided = 'tollgate_decisions_total{status="APPROVED",action="approve",decider="operator"}';
    expect(sample(after, decided)).toBe(sample(before, decided) + 1);
    const timed = 'tollgate_time_to_decision_seconds_count{decider="operator"}';
    expect(sample(after, timed)).toBe(sample(before, timed) + 1);
    const pushes = 'tollgate_decision_pushes_total{channel="long-poll"}';
    expect(sample(after, pushes)).toBe(sample(before, pushes) + 1);
    const requested = 'tollgate_api_call_duration_seconds_count{procedure="approval.request",status="200"}';
    expect(sample(after, requested)).toBe(sample(before, requested) + 1);
    expect(sample(after, `tollgate_approvals_pending{workspace="${workspace}"}`)).toBe(sample(before, `tollgate_approvals_pending{workspace="${workspace}"}`));
    expect(after).toMatch(/^tollgate_process_nodejs_eventloop_lag_seconds /m);
    const statementsInTransactions = 'tollgate_database_statement_duration_seconds_count{kind="query",in_transaction="true"}';
    expect(sample(after, statementsInTransactions)).toBeGreaterThan(sample(before, statementsInTransactions));

    // A caller cannot grow the label set with made-up procedure names.
    await fetch(`${test.url}/api/trpc/no.such.procedure${"x".repeat(20)}`);
    expect(await scrape()).toContain('tollgate_api_call_duration_seconds_count{procedure="unknown",status="404"}');
    sdk.close();
  });

  it("metrics: connections held count an SDK client's from its creation, before its first call, and a console's, each until it closes", async () => {
    const held = async (holder: "agent" | "operator") => sample(await scrape(), `tollgate_connections_held{holder="${holder}"}`);
    // The clients of the tests before have closed.
    await expect.poll(() => held("agent")).toBe(0);
    expect(await held("operator")).toBe(0);

    // Made with the client, so its first ask does not wait for it.
    const sdk = agentSdk(test.url);
    await expect.poll(() => held("agent")).toBe(1);
    sdk.close();
    await expect.poll(() => held("agent")).toBe(0);

    const login = await fetch(`${test.url}/api/trpc/auth.login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ADMIN) });
    const token = (login.headers.get("set-cookie") ?? "").split(";")[0]!.split("=")[1];
    const consoleSocket = io(test.url, { transports: ["websocket"], reconnection: false, auth: { token } });
    await expect.poll(() => held("operator")).toBe(1);
    consoleSocket.close();
    await expect.poll(() => held("operator")).toBe(0);
  });
});
