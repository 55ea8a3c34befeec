// Durable runs through the router: a runId names the request in progress for
// its agent key, whatever process (and sessionId) comes back with it; one
// process drives it under a lease; what the adapter keeps is sealed and ends
// with the request; the console tells a parked run from a gone agent.
import { TRPCError } from "@trpc/server";
import { describe, expect, it } from "vitest";
import { RUN_LEASE_MS } from "../server/domain/durable-run.ts";
import { releaseRunsOf } from "../server/services/runs/run-state.ts";
import { agentCaller, operatorCaller, useFreshApp, type TestApp, type TestDatabase } from "./harness.ts";

let db: TestDatabase;
let app: TestApp;
useFreshApp((created) => (db = created), (fresh) => (app = fresh));

async function codeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    if (error instanceof TRPCError) return `${error.code}: ${error.message}`;
    throw error;
  }
  throw new Error("the call was expected to be refused, but it succeeded");
}

/** Moves the server's clock on by `ms`. */
function advance(ms: number) {
  const now = app.deps.now();
  app.deps.now = () => new Date(now.getTime() + ms);
}

async function opened() {
  const agent = agentCaller(app.deps);
  const { sessionId } = await agent.session.open({});
  return { agent, sessionId };
}

describe("durable runs", () => {
  it("run.begin: the same runId continues its request in progress whatever the session, with the state kept for it; once the request ends, the next begin follows on in the same task", async () => {
    const { agent, sessionId } = await opened();
    const { sessionId: otherSession } = await agent.session.open({});
    const first = await agent.run.begin({ runId: "order-42", holder: "p1", sessionId, agent: "refunds" });
    expect(first).toMatchObject({ runId: "order-42", sessionId, continued: false, state: null });
    await agent.run.hold({ runId: "order-42", holder: "p1", state: '{"step":3}' });

    const stored = await db.prisma.durableRun.findFirstOrThrow({ where: { runId: "order-42" } });
    expect(stored.state).not.toContain("step");

    await releaseRunsOf(app.deps, stored.agentKeyId, "p1");
    const again = await agent.run.begin({ runId: "order-42", holder: "p2", sessionId: otherSession, agent: "refunds" });
    expect(again).toMatchObject({ requestId: first.requestId, taskId: first.taskId, sessionId, continued: true, state: '{"step":3}' });

    await agent.request.complete({ requestId: first.requestId });
    expect(await db.prisma.durableRun.findFirstOrThrow({ where: { runId: "order-42" } })).toMatchObject({ state: null, leaseHolder: null });

    const next = await agent.run.begin({ runId: "order-42", holder: "p3", sessionId: otherSession, agent: "refunds" });
    expect(next).toMatchObject({ taskId: first.taskId, sessionId, continued: false, state: null });
    expect(next.requestId).not.toBe(first.requestId);
  });

  it("run.begin: a runId is one agent's: another agent of the same key naming it is refused, saying whose run it is, whether the run is in progress or ended", async () => {
    const { agent, sessionId } = await opened();
    const first = await agent.run.begin({ runId: "refund-42", holder: "p1", sessionId, agent: "refund-graph" });
    const refusal = 'BAD_REQUEST: runId "refund-42" is a run of agent "refund-graph"; agent "refund-bot" needs a runId of its own';
    // In progress, with no process driving it: never handed another agent's request and the state its adapter kept.
    const stored = await db.prisma.durableRun.findFirstOrThrow({ where: { runId: "refund-42" } });
    await releaseRunsOf(app.deps, stored.agentKeyId, "p1");
    expect(await codeOf(agent.run.begin({ runId: "refund-42", holder: "p2", sessionId, agent: "refund-bot" }))).toBe(refusal);
    await agent.request.complete({ requestId: first.requestId });
    expect(await codeOf(agent.run.begin({ runId: "refund-42", holder: "p2", sessionId, agent: "refund-bot" }))).toBe(refusal);
    // The refusal took nothing: the run's own agent follows on.
    expect(await agent.run.begin({ runId: "refund-42", holder: "p3", sessionId, agent: "refund-graph" })).toMatchObject({ taskId: first.taskId, continued: false });
  });

  it("run.begin: a process started in place of a dead one, replacing it, takes its run over at once; the dead one's connection closing late leaves the new lease alone", async () => {
    const { agent, sessionId } = await opened();
    const first = await agent.run.begin({ runId: "sync-3", holder: "dead", sessionId, agent: "mailer" });
    // Naming a holder that does not hold the run takes nothing from the one that does.
    expect(await codeOf(agent.run.begin({ runId: "sync-3", holder: "p2", replacing: "someone-else", sessionId, agent: "mailer" }))).toMatch(/^CONFLICT: .*\(dead\)/);
    expect(await agent.run.begin({ runId: "sync-3", holder: "p2", replacing: "dead", sessionId, agent: "mailer" })).toMatchObject({ requestId: first.requestId, continued: true });
    const { agentKeyId } = await db.prisma.durableRun.findFirstOrThrow({ where: { runId: "sync-3" } });
    await releaseRunsOf(app.deps, agentKeyId, "dead");
    expect(await codeOf(agent.run.begin({ runId: "sync-3", holder: "p3", sessionId, agent: "mailer" }))).toMatch(/^CONFLICT: .*\(p2\)/);
    expect(await codeOf(agent.run.hold({ runId: "sync-3", holder: "dead" }))).toMatch(/^CONFLICT/);
  });

  it("run.begin: while one process holds the lease, another is CONFLICT; after the lease lapses (or its connection closed) the other continues the run", async () => {
    const { agent, sessionId } = await opened();
    const first = await agent.run.begin({ runId: "job-7", holder: "p1", sessionId, agent: "mailer" });
    expect(await codeOf(agent.run.begin({ runId: "job-7", holder: "p2", sessionId, agent: "mailer" }))).toMatch(
      /^CONFLICT: run "job-7" is driven by another live process \(p1\)/,
    );
    advance(RUN_LEASE_MS + 1);
    expect(await agent.run.begin({ runId: "job-7", holder: "p2", sessionId, agent: "mailer" })).toMatchObject({ requestId: first.requestId, continued: true });
    // The first process, back, finds its run taken over: it must stop.
    expect(await codeOf(agent.run.hold({ runId: "job-7", holder: "p1" }))).toMatch(/^CONFLICT/);
    expect(await db.prisma.request.count()).toBe(1);
  });

  it("run: a runId is the agent key's own: another key's same runId is another run, and it cannot hold this one", async () => {
    const { agent, sessionId } = await opened();
    const mine = await agent.run.begin({ runId: "shared-name", holder: "p1", sessionId, agent: "a" });
    const admin = await operatorCaller(app.deps);
    const other = agentCaller(app.deps, (await admin.agentKey.create({ name: "other" })).key);
    const { sessionId: theirSession } = await other.session.open({});
    const theirs = await other.run.begin({ runId: "shared-name", holder: "p1", sessionId: theirSession, agent: "a" });
    expect(theirs.requestId).not.toBe(mine.requestId);
    expect(await codeOf(other.run.hold({ runId: "never-begun", holder: "p1" }))).toMatch(/^NOT_FOUND/);
  });

  it("run.hold: a state larger than the limit is a 400-class refusal that keeps nothing", async () => {
    const { agent, sessionId } = await opened();
    await agent.run.begin({ runId: "big", holder: "p1", sessionId, agent: "a" });
    expect(await codeOf(agent.run.hold({ runId: "big", holder: "p1", state: "x".repeat(256 * 1024 + 1) }))).toMatch(/^BAD_REQUEST/);
    expect(await db.prisma.durableRun.findFirstOrThrow({ where: { runId: "big" } })).toMatchObject({ state: null });
  });

  it("approval.await: a long-poll is held no longer than the liveness window allows, so an agent waiting on it is never shown as gone", async () => {
    const livenessMs = app.deps.agentLivenessMs;
    app.deps.agentLivenessMs = 3_000;
    try {
      const { agent, sessionId } = await opened();
      const begun = await agent.request.begin({ sessionId, agent: "poller" });
      const asked = await agent.approval.request({ requestId: begun.requestId, tool: "send", args: {} });
      // Asked to hold for a minute: answered PENDING well within the test's 20 s, for the agent to ask again.
      expect(await agent.approval.await({ approvalId: asked.approvalId, timeoutMs: 60_000 })).toMatchObject({ status: "PENDING" });
      const operator = await operatorCaller(app.deps);
      expect(await operator.approval.get({ approvalId: asked.approvalId })).toMatchObject({ agentWaiting: "waiting" });
    } finally {
      app.deps.agentLivenessMs = livenessMs;
    }
  }, 20_000);

  it("console: with no process waiting, a durable run's approval is parked (not gone), and a claim never reported is an unknown outcome once its request ended", async () => {
    const { agent, sessionId } = await opened();
    const run = await agent.run.begin({ runId: "thread-1", holder: "p1", sessionId, agent: "a" });
    const plain = await agent.request.begin({ sessionId, agent: "b" });
    const parked = await agent.approval.request({ requestId: run.requestId, tool: "send", args: {} });
    const gone = await agent.approval.request({ requestId: plain.requestId, tool: "send", args: {} });
    const operator = await operatorCaller(app.deps);
    expect(await operator.approval.get({ approvalId: parked.approvalId })).toMatchObject({ agentWaiting: "waiting", runId: "thread-1" });
    advance(app.deps.agentLivenessMs + 1);
    expect(await operator.approval.get({ approvalId: parked.approvalId })).toMatchObject({ agentWaiting: "parked" });
    expect(await operator.approval.get({ approvalId: gone.approvalId })).toMatchObject({ agentWaiting: "gone", runId: null });

    await operator.approval.decide({ approvalId: parked.approvalId, action: "approve" });
    await agent.approval.claimExecution({ approvalId: parked.approvalId, claimKey: `p1:${parked.approvalId}` });
    expect(await operator.approval.get({ approvalId: parked.approvalId })).toMatchObject({ executionUnknown: false });
    await agent.request.complete({ requestId: run.requestId });
    expect(await operator.approval.get({ approvalId: parked.approvalId })).toMatchObject({ executionUnknown: true, executedAt: null });
  });

  it("approval.reportNotRun: only a decided call, write-once, and a call reported as not run can no longer be claimed to run", async () => {
    const { agent, sessionId } = await opened();
    const { requestId } = await agent.request.begin({ sessionId, agent: "a" });
    const asked = await agent.approval.request({ requestId, tool: "send", args: {} });
    expect(await codeOf(agent.approval.reportNotRun({ approvalId: asked.approvalId, reason: "dropped" }))).toMatch(/^PRECONDITION_FAILED: .* still pending/);
    const operator = await operatorCaller(app.deps);
    await operator.approval.decide({ approvalId: asked.approvalId, action: "approve" });
    await agent.approval.reportNotRun({ approvalId: asked.approvalId, reason: "dropped" });
    expect(await agent.approval.reportNotRun({ approvalId: asked.approvalId, reason: "dropped" })).toEqual({ approvalId: asked.approvalId, reason: "dropped" });
    expect(await codeOf(agent.approval.reportNotRun({ approvalId: asked.approvalId, reason: "other" }))).toMatch(/^CONFLICT/);
    expect(await agent.approval.claimExecution({ approvalId: asked.approvalId, claimKey: "p1:x" })).toMatchObject({ granted: false, execution: null });
    expect(await operator.approval.get({ approvalId: asked.approvalId })).toMatchObject({ notRunReason: "dropped", executionUnknown: false });
  });
});
