// The engine end to end over real HTTP: agents through the SDK, operators
// through a logged-in client, against a started server.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook } from "../sdk/src/index.ts";
import { agentSdk, operatorClient, type OperatorClient } from "./clients.ts";
import { AGENT_KEY } from "./harness.ts";
import { callHttp, useTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let operator: OperatorClient;
useTestServer((started, loggedIn) => {
  test = started;
  operator = loggedIn;
});

async function waitFor<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** How many calls of a procedure the server has answered, from its call metrics. */
async function callsAnswered(procedure: string): Promise<number> {
  const metrics = await (await fetch(`${test.url}/metrics`)).text();
  const counts = metrics.matchAll(/^tollgate_api_call_duration_seconds_count\{procedure="([^"]+)",status="\d+"\} (\d+)$/gm);
  return [...counts].filter(([, name]) => name === procedure).reduce((sum, [, , count]) => sum + Number(count), 0);
}

const treeStatuses = async (sessionId: string) => {
  const tree = await operator.task.tree.query({ sessionId });
  const out: Record<string, string> = {};
  const walk = (nodes: typeof tree.roots) => {
    for (const node of nodes) {
      out[node.agent] = node.status;
      walk(node.children);
    }
  };
  walk(tree.roots);
  return out;
};

describe("engine over HTTP", () => {
  it("gate: an agent's tool waits for the operator, runs once with the edited args, and the chain completes", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({ title: "gate" });
    const o1 = await sdk.begin({ sessionId, agent: "O1", kind: "orchestrator" });
    const a2 = await sdk.begin({ sessionId, agent: "A2", parentRequestId: o1.requestId });
    const runs: unknown[] = [];
    const gated = a2.gate("send_email", { to: "all@example.com" }, (args) => {
      runs.push(args);
      return { sent: true };
    });
    const pending = await waitFor(() => operator.approval.list.query({ status: "PENDING", sessionId }), (list) => list.items.length === 1);
    expect(await treeStatuses(sessionId)).toEqual({ O1: "PAUSED", A2: "PAUSED" });
    await operator.approval.decide.mutate({ approvalId: pending.items[0]!.approvalId, action: "edit", args: { to: "one@example.com" } });
    const outcome = await gated;
    expect(outcome).toMatchObject({ outcome: "executed", edited: true, args: { to: "one@example.com" }, result: { sent: true } });
    expect(runs).toEqual([{ to: "one@example.com" }]);
    expect(await treeStatuses(sessionId)).toEqual({ O1: "RUNNING", A2: "RUNNING" });
    await a2.complete({ sent: 1 });
    await o1.complete({ ok: true });
    expect(await treeStatuses(sessionId)).toEqual({ O1: "COMPLETED", A2: "COMPLETED" });
    const item = await operator.approval.get.query({ approvalId: pending.items[0]!.approvalId });
    expect(item).toMatchObject({ args: { to: "all@example.com" }, approvedArgs: { to: "one@example.com" }, executedArgs: { to: "one@example.com" } });
  });

  it("gate: a replica that gets the same decision after the tool ran does not run it again", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({});
    const begun = await sdk.begin({ sessionId, agent: "mailer" });
    let runs = 0;
    const gated = begun.gate("send_email", { to: "a@example.com" }, () => ++runs);
    const pending = await waitFor(() => operator.approval.list.query({ status: "PENDING", sessionId }), (list) => list.items.length === 1);
    const approvalId = pending.items[0]!.approvalId;
    await operator.approval.decide.mutate({ approvalId, action: "approve" });
    expect(await gated).toMatchObject({ outcome: "executed", result: 1, alreadyExecuted: false });

    const replica = agentSdk(test.url);
    const again = await replica.settle(await replica.waitForDecision(approvalId), { to: "a@example.com" }, () => ++runs);
    expect(again).toMatchObject({ outcome: "executed", result: 1, alreadyExecuted: true, args: { to: "a@example.com" } });
    expect(runs).toBe(1);
  });

  it("push: the decision reaches the waiting agent over the connection it holds, with no request per approval", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({});
    const begun = await sdk.begin({ sessionId, agent: "mailer" });
    const [awaitsBefore, asksBefore] = [await callsAnswered("approval.await"), await callsAnswered("approval.request")];
    try {
      for (let round = 0; round < 3; round++) {
        const gated = begun.gate("send_email", { round }, () => round);
        const pending = await waitFor(() => operator.approval.list.query({ status: "PENDING", sessionId }), (list) => list.items.length === 1);
        await operator.approval.decide.mutate({ approvalId: pending.items[0]!.approvalId, action: "approve" });
        expect(await gated).toMatchObject({ outcome: "executed", result: round });
      }
    } finally {
      sdk.close();
    }
    expect(await callsAnswered("approval.await")).toBe(awaitsBefore);
    expect(await callsAnswered("approval.request")).toBe(asksBefore + 3);
  });

  it("push: with the held connection turned off, the SDK long-polls and gets the same decision", async () => {
    const sdk = agentSdk(test.url, undefined, { push: false });
    const { sessionId } = await sdk.openSession({});
    const begun = await sdk.begin({ sessionId, agent: "mailer" });
    const gated = begun.gate("send_email", { to: "a@example.com" }, () => "sent");
    const pending = await waitFor(() => operator.approval.list.query({ status: "PENDING", sessionId }), (list) => list.items.length === 1);
    await operator.approval.decide.mutate({ approvalId: pending.items[0]!.approvalId, action: "reject", message: "not today" });
    expect(await gated).toMatchObject({ outcome: "rejected", status: "REJECTED", message: "not today" });
  });

  it("gate: of two replicas settling the same approval at once, only the one holding the execution claim runs the tool", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({});
    const begun = await sdk.begin({ sessionId, agent: "mailer" });
    const asked = await sdk.call("approval.request", { requestId: begun.requestId, tool: "send_email", args: { to: "a@example.com" } });
    await operator.approval.decide.mutate({ approvalId: asked.approvalId, action: "approve" });
    const decided = await sdk.waitForDecision(asked.approvalId);

    let runs = 0;
    let entered!: () => void;
    const running = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const first = agentSdk(test.url).settle(decided, { to: "a@example.com" }, async () => {
      runs++;
      entered();
      await released;
      return "sent";
    });
    await running;
    // The first replica is inside the tool: the second may not start it.
    const second = await agentSdk(test.url).settle(decided, { to: "a@example.com" }, () => ++runs);
    expect(second).toMatchObject({ outcome: "claimedElsewhere", approvalId: asked.approvalId });
    release();
    expect(await first).toMatchObject({ outcome: "executed", result: "sent", alreadyExecuted: false });
    // Once reported, a late replica learns what ran.
    const late = await agentSdk(test.url).settle(decided, { to: "a@example.com" }, () => ++runs);
    expect(late).toMatchObject({ outcome: "executed", result: "sent", alreadyExecuted: true });
    expect(runs).toBe(1);
  });

  it("parallel pauses: two agents under one orchestrator pause it until both are decided", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({});
    const root = await sdk.begin({ sessionId, agent: "O1", kind: "orchestrator" });
    const left = await sdk.begin({ sessionId, agent: "left", parentRequestId: root.requestId });
    const right = await sdk.begin({ sessionId, agent: "right", parentRequestId: root.requestId });
    const leftGate = left.gate("delete_user", { id: 1 }, () => "deleted");
    const rightGate = right.gate("pay_invoice", { id: 2 }, () => "paid");
    const pending = await waitFor(() => operator.approval.list.query({ status: "PENDING", sessionId }), (list) => list.items.length === 2);
    const byTool = Object.fromEntries(pending.items.map((item) => [item.tool, item.approvalId]));
    await operator.approval.decide.mutate({ approvalId: byTool.delete_user!, action: "reject", message: "never" });
    expect(await leftGate).toMatchObject({ outcome: "rejected", message: "never" });
    expect(await treeStatuses(sessionId)).toEqual({ O1: "PAUSED", left: "RUNNING", right: "PAUSED" });
    await operator.approval.decide.mutate({ approvalId: byTool.pay_invoice!, action: "respond", message: "already paid" });
    expect(await rightGate).toMatchObject({ outcome: "responded", message: "already paid" });
    expect(await treeStatuses(sessionId)).toEqual({ O1: "RUNNING", left: "RUNNING", right: "RUNNING" });
  });

  it("duplicates: the same approval request sent concurrently makes one approval", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({});
    const begun = await sdk.begin({ sessionId, agent: "mailer" });
    const input = { requestId: begun.requestId, tool: "send", args: { n: 1 }, idempotencyKey: `dup-${begun.requestId}` };
    const results = await Promise.all(Array.from({ length: 5 }, () => sdk.call("approval.request", input)));
    expect(new Set(results.map((result) => result.approvalId)).size).toBe(1);
    expect((await operator.approval.list.query({ sessionId })).items).toHaveLength(1);
  });

  it("decisions: the same decision sent concurrently is recorded once; conflicting ones get CONFLICT", async () => {
    const sdk = agentSdk(test.url);
    const second = await operatorClient(test.url);
    const { sessionId } = await sdk.openSession({});
    const begun = await sdk.begin({ sessionId, agent: "mailer" });
    const asked = await sdk.call("approval.request", { requestId: begun.requestId, tool: "send", args: {} });
    const same = await Promise.allSettled([
      operator.approval.decide.mutate({ approvalId: asked.approvalId, action: "approve" }),
      second.approval.decide.mutate({ approvalId: asked.approvalId, action: "approve" }),
    ]);
    expect(same.map((result) => result.status)).toEqual(["fulfilled", "fulfilled"]);
    const conflicting = await Promise.allSettled([
      operator.approval.decide.mutate({ approvalId: asked.approvalId, action: "reject" }),
      second.approval.decide.mutate({ approvalId: asked.approvalId, action: "respond", message: "x" }),
    ]);
    for (const result of conflicting) {
      expect(result.status).toBe("rejected");
      expect((result as PromiseRejectedResult).reason.data.httpStatus).toBe(409);
    }

    const another = await sdk.call("approval.request", { requestId: begun.requestId, tool: "send", args: { n: 2 } });
    const race = await Promise.allSettled([
      operator.approval.decide.mutate({ approvalId: another.approvalId, action: "approve" }),
      second.approval.decide.mutate({ approvalId: another.approvalId, action: "reject", message: "no" }),
    ]);
    expect(race.filter((result) => result.status === "fulfilled")).toHaveLength(1);
    expect((await operator.audit.list.query({ subjectId: another.approvalId })).items).toHaveLength(1);
  });

  it("long-poll: approval.await returns the moment the decision commits", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({});
    const begun = await sdk.begin({ sessionId, agent: "mailer" });
    const asked = await sdk.call("approval.request", { requestId: begun.requestId, tool: "send", args: {} });
    const started = Date.now();
    const waiting = sdk.call("approval.await", { approvalId: asked.approvalId, timeoutMs: 30_000 });
    // Decide only once the long-poll is really waiting.
    await expect.poll(() => test.server.deps.waiters.size).toBe(1);
    await operator.approval.decide.mutate({ approvalId: asked.approvalId, action: "approve" });
    const result = await waiting;
    expect(result.status).toBe("APPROVED");
    // Woken by the decision, well before its 30 s timeout (the bound leaves room for a busy machine).
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("long-poll: without a decision it answers PENDING after its timeout", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({});
    const begun = await sdk.begin({ sessionId, agent: "mailer" });
    const asked = await sdk.call("approval.request", { requestId: begun.requestId, tool: "send", args: {} });
    expect(await sdk.call("approval.await", { approvalId: asked.approvalId, timeoutMs: 300 })).toEqual({
      approvalId: asked.approvalId,
      status: "PENDING",
      gate: { policyId: null, policy: null, allow: ["approve", "reject", "edit", "respond"], role: "OPERATOR", approvers: 1, expiresAt: null, onTimeout: "reject" },
    });
  });

  it("subscription: decisions stream as server-sent events and resume after lastEventId", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({});
    const begun = await sdk.begin({ sessionId, agent: "mailer" });
    const first = await sdk.call("approval.request", { requestId: begun.requestId, tool: "a", args: {} });
    await operator.approval.decide.mutate({ approvalId: first.approvalId, action: "approve" });
    const second = await sdk.call("approval.request", { requestId: begun.requestId, tool: "b", args: {} });

    const controller = new AbortController();
    const input = encodeURIComponent(JSON.stringify({ requestId: begun.requestId, lastEventId: first.approvalId }));
    const response = await fetch(`${test.url}/api/trpc/approval.onDecision?input=${input}`, {
      headers: { authorization: `Bearer ${AGENT_KEY}`, accept: "text/event-stream" },
      signal: controller.signal,
    });
    expect(response.headers.get("content-type")).toMatch(/text\/event-stream/);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    setTimeout(() => void operator.approval.decide.mutate({ approvalId: second.approvalId, action: "reject", message: "no" }), 100);
    while (!text.includes(`id: ${second.approvalId}`)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    controller.abort();
    expect(text).not.toContain(`id: ${first.approvalId}`);
    expect(text).toContain(`id: ${second.approvalId}`);
    expect(text).toMatch(/"status":"REJECTED"/);
  });

  it("timeout: an approval nobody decides expires on the server with the fail-closed default", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({});
    const begun = await sdk.begin({ sessionId, agent: "mailer" });
    const outcome = await begun.gate("send", {}, () => "ran", { timeoutMs: 300 });
    expect(outcome).toMatchObject({ outcome: "rejected", status: "EXPIRED", decision: { decidedBy: "tollgate (timeout)" } });
    expect(await treeStatuses(sessionId)).toEqual({ mailer: "RUNNING" });
  });
});

describe("webhooks", () => {
  let receiver: Server;
  let receiverUrl: string;
  const received: { body: string; signature: string | undefined; status: number; traceparent?: string }[] = [];
  let failuresLeft = 2;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        const status = failuresLeft-- > 0 ? 503 : 200;
        received.push({ body, signature: req.headers["tollgate-signature"] as string | undefined, status, traceparent: req.headers.traceparent as string | undefined });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/resume`;
  });
  afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

  it("webhook: the decision is POSTed to resumeUrl, signed, and retried until acknowledged", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({});
    const begun = await sdk.begin({ sessionId, agent: "mailer", resumeUrl: receiverUrl });
    const asked = await sdk.call("approval.request", { requestId: begun.requestId, tool: "send", args: {} });
    await operator.approval.decide.mutate({ approvalId: asked.approvalId, action: "approve" });
    await waitFor(async () => received.length, (count) => count >= 3, 10_000);
    expect(received.map((delivery) => delivery.status)).toEqual([503, 503, 200]);
    for (const delivery of received) {
      expect(verifyWebhook(delivery.body, delivery.signature, AGENT_KEY)).toBe(true);
      expect(JSON.parse(delivery.body)).toMatchObject({ type: "approval.decided", approvalId: asked.approvalId, status: "APPROVED" });
    }
    expect(verifyWebhook(received[2]!.body, received[2]!.signature, "tgk_some_other_agent_key")).toBe(false);
    const delivery = await waitFor(
      () => test.server.deps.prisma.decisionDelivery.findFirstOrThrow({ where: { approvalId: asked.approvalId } }),
      (row) => row.status === "DELIVERED",
    );
    expect(delivery).toMatchObject({ status: "DELIVERED", attempts: 3 });
  });

  it("trace context: the agent's traceparent is kept with its request and sent on with the decision webhook; an invalid one is ignored", async () => {
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const headers = { authorization: `Bearer ${AGENT_KEY}` };
    const { sessionId } = (await callHttp(test.url, "session.open", "mutation", {}, headers)).body.result.data;
    const begun = await callHttp(test.url, "request.begin", "mutation", { sessionId, agent: "traced", resumeUrl: receiverUrl }, { ...headers, traceparent });
    const { requestId } = begun.body.result.data;
    const untraced = await callHttp(test.url, "request.begin", "mutation", { sessionId, agent: "traced" }, { ...headers, traceparent: "00-not-a-trace-01" });
    expect(untraced.status).toBe(200);

    expect((await operator.request.get.query({ requestId })).request.traceparent).toBe(traceparent);
    expect((await operator.request.get.query({ requestId: untraced.body.result.data.requestId })).request.traceparent).toBeNull();

    const asked = (await callHttp(test.url, "approval.request", "mutation", { requestId, tool: "send", args: {} }, headers)).body.result.data;
    await operator.approval.decide.mutate({ approvalId: asked.approvalId, action: "approve" });
    const delivered = await waitFor(
      async () => received.find((delivery) => delivery.status === 200 && JSON.parse(delivery.body).approvalId === asked.approvalId),
      (delivery) => delivery !== undefined,
    );
    expect(delivered!.traceparent).toBe(traceparent);
  });

  it("webhook: a durable run's decision carries its runId, so a deployment can start the run's continuation itself", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({});
    const run = await sdk.call("run.begin", { runId: "conversation-7", holder: "p1", sessionId, agent: "mailer", resumeUrl: receiverUrl });
    const asked = await sdk.call("approval.request", { requestId: run.requestId, tool: "send", args: {} });
    await operator.approval.decide.mutate({ approvalId: asked.approvalId, action: "approve" });
    const delivered = await waitFor(
      async () => received.find((delivery) => delivery.status === 200 && JSON.parse(delivery.body).approvalId === asked.approvalId),
      (delivery) => delivery !== undefined,
    );
    expect(JSON.parse(delivered!.body)).toMatchObject({ type: "approval.decided", runId: "conversation-7", requestId: run.requestId });
    sdk.close();
  });
});
