// Where one call's time goes: for each hot procedure, its p50 and mean from the client;
// from the server's own /metrics before and after each call, the statements it
// sent to the database, the driver's time on them, and the server's time from
// the request's arrival to the response's end (means). What the server did not spend
// is the client's and the loopback's.
import type { createTRPCClient } from "@trpc/client";
import { contractCaller } from "../sdk/src/transport.ts";
import type { AppRouter } from "../server/api/router.ts";
import { percentile } from "./stats.ts";
import type { BenchServer } from "./server.ts";

type OperatorClient = ReturnType<typeof createTRPCClient<AppRouter>>;

export interface CallCost {
  call: string;
  p50Ms: number;
  meanMs: number;
  statements: number;
  databaseMs: number;
  /** In the server, from the request's arrival to the response's end, database included. */
  serverMs: number;
}

async function serverTotals(url: string): Promise<{ count: number; seconds: number; callSeconds: number }> {
  const text = await fetch(`${url}/metrics`).then((response) => response.text());
  let count = 0;
  let seconds = 0;
  let callSeconds = 0;
  const value = (line: string) => Number(line.split(" ").at(-1));
  for (const line of text.split("\n")) {
    if (line.startsWith("tollgate_database_statement_duration_seconds_count")) count += value(line);
    if (line.startsWith("tollgate_database_statement_duration_seconds_sum")) seconds += value(line);
    if (line.startsWith("tollgate_api_call_duration_seconds_sum")) callSeconds += value(line);
  }
  return { count, seconds, callSeconds };
}

/**
 * What one scrape of /metrics itself adds to the statement totals: the least
 * of five pairs of scrapes with nothing between them. Background work (a
 * decision's webhook, a job's poll) can only add to a pair, and one pair that
 * caught some made every call's share come out too small, even negative.
 */
async function scrapeCost(url: string): Promise<{ count: number; seconds: number }> {
  let least = { count: Infinity, seconds: Infinity };
  for (let i = 0; i < 5; i++) {
    const first = await serverTotals(url);
    const second = await serverTotals(url);
    const pair = { count: second.count - first.count, seconds: second.seconds - first.seconds };
    if (pair.count < least.count || (pair.count === least.count && pair.seconds < least.seconds)) least = pair;
  }
  return least;
}

/**
 * Runs `once` `count` times after 10 warm-up calls, each on what one `prepare`
 * made. Everything is prepared first, so no background work of the preparing
 * (a decision's webhook, say) runs inside a measured call; a scrape's own
 * statements are measured with nothing between two scrapes and taken off.
 */
async function cost<T>(server: BenchServer, call: string, count: number, prepare: () => Promise<T>, once: (prepared: T) => Promise<unknown>): Promise<CallCost> {
  for (let i = 0; i < 10; i++) await once(await prepare());
  const prepared: T[] = [];
  for (let i = 0; i < count; i++) prepared.push(await prepare());
  const scrape = await scrapeCost(server.url);
  const samples: number[] = [];
  let statements = 0;
  let seconds = 0;
  let callSeconds = 0;
  for (const input of prepared) {
    const before = await serverTotals(server.url);
    const started = performance.now();
    await once(input);
    samples.push(performance.now() - started);
    const after = await serverTotals(server.url);
    statements += after.count - before.count - scrape.count;
    seconds += after.seconds - before.seconds - scrape.seconds;
    callSeconds += after.callSeconds - before.callSeconds;
  }
  const perCall = (total: number) => (total * 1000) / count;
  return { call, p50Ms: percentile(samples, 50), meanMs: samples.reduce((sum, sample) => sum + sample, 0) / count, statements: statements / count, databaseMs: perCall(seconds), serverMs: perCall(callSeconds) };
}

export async function callCosts(server: BenchServer, operator: OperatorClient, count: number): Promise<CallCost[]> {
  // The SDK's own transport, without the SDK around it, so each figure is the call alone.
  const call = contractCaller(`${server.url}/api/trpc`, server.agentKey);
  const { sessionId } = await call("session.open", { title: "bench: call costs" });
  const nothing = async () => undefined;
  const begun = async () => (await call("request.begin", { sessionId, agent: "bench-agent" })).requestId;
  const asked = async () => (await call("approval.request", { requestId: await begun(), tool: "send_email", args: { to: "a@example.com" } })).approvalId;
  const decided = async () => {
    const approvalId = await asked();
    await operator.approval.decide.mutate({ approvalId, action: "approve" });
    return approvalId;
  };
  let ruleAdded: Promise<unknown> | undefined;
  const addRule = () => (ruleAdded ??= operator.policy.create.mutate({ name: "bench: lookups", match: { tool: "bench_lookup" }, outcome: "approve" }));
  const traceBatch = Array.from({ length: 100 }, (_, i) => ({ type: "tool_call", name: "search", data: { query: `q${i}` } }));
  const healthz = await cost(server, "GET /healthz (HTTP alone, no tRPC)", count, nothing, () => fetch(`${server.url}/healthz`).then((response) => response.text()));
  return [
    { ...healthz, statements: 0, databaseMs: 0, serverMs: 0 },
    await cost(server, "session.open", count, nothing, () => call("session.open", { title: "t" })),
    await cost(server, "request.begin", count, nothing, () => call("request.begin", { sessionId, agent: "bench-agent" })),
    await cost(server, "request.complete", count, begun, (requestId) => call("request.complete", { requestId, output: { ok: true } })),
    await cost(server, "request.trace (100 events)", count, begun, (requestId) => call("request.trace", { requestId, events: traceBatch })),
    await cost(server, "approval.request (a person decides)", count, begun, (requestId) => call("approval.request", { requestId, tool: "send_email", args: { to: "a@example.com" } })),
    await cost(server, "approval.request (a rule decides)", count, async () => {
      // The rule is added once, before the first call is prepared; the warm-up calls load it into the server's cache.
      await addRule();
      return begun();
    }, (requestId) => call("approval.request", { requestId, tool: "bench_lookup", args: { id: 7 } })),
    await cost(server, "approval.decide (operator)", count, asked, (approvalId) => operator.approval.decide.mutate({ approvalId, action: "approve" })),
    await cost(server, "approval.await (already decided)", count, decided, (approvalId) => call("approval.await", { approvalId, timeoutMs: 1_000 })),
  ];
}
