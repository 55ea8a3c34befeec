// The HITL engine through the router on a fresh database: the reference
// scenario of ARCHITECTURE.md, cascading pause and resume, decisions,
// idempotency, timeouts, cancellation and bad input.
import { describe, expect, it } from "vitest";
import { expireDueApprovals } from "../server/services/approvals/expire-approvals.ts";
import { agentCaller, operatorCaller, useFreshApp, type TestApp, type TestDatabase } from "./harness.ts";

let db: TestDatabase;
let app: TestApp;
useFreshApp((created) => (db = created), (fresh) => (app = fresh));

async function statuses(ids: string[]) {
  const requests = await db.prisma.request.findMany({ where: { id: { in: ids } } });
  const tasks = await db.prisma.task.findMany({ where: { id: { in: ids } } });
  const byId = new Map<string, string>([...requests, ...tasks].map((row) => [row.id, row.status]));
  return ids.map((id) => byId.get(id));
}

describe("reference scenario", () => {
  it("scenario: a tool approval deep in a follow-on pauses the chain up to O1, and approving resumes it", async () => {
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId: S1 } = await agent.session.open({ title: "reference" });
    const O1 = await agent.request.begin({ sessionId: S1, agent: "O1", kind: "orchestrator", input: { ask: "plan" } });
    const A1 = await agent.request.begin({ sessionId: S1, agent: "A1", parentRequestId: O1.requestId });
    const A2 = await agent.request.begin({ sessionId: S1, agent: "A2", parentRequestId: O1.requestId });
    const O2 = await agent.request.begin({ sessionId: S1, agent: "O2", kind: "orchestrator", parentRequestId: O1.requestId });
    const A3 = await agent.request.begin({ sessionId: S1, agent: "A3", parentRequestId: O2.requestId });
    const A4 = await agent.request.begin({ sessionId: S1, agent: "A4", parentRequestId: O2.requestId });
    for (const leaf of [A3, A4, O2, A1, A2, O1]) {
      expect(await agent.request.complete({ requestId: leaf.requestId, output: { done: true } })).toEqual({ requestId: leaf.requestId, status: "COMPLETED" });
    }
    expect(await statuses([O1.taskId, A2.taskId, A4.taskId])).toEqual(["COMPLETED", "COMPLETED", "COMPLETED"]);
    const tree = await operator.task.tree({ sessionId: S1 });
    expect(tree.roots).toHaveLength(1);
    expect(tree.roots[0]!.children.map((child) => child.agent)).toEqual(["A1", "A2", "O2"]);
    expect(tree.roots[0]!.children[2]!.children.map((child) => child.agent)).toEqual(["A3", "A4"]);

    // Follow-on: R7 in T1, R8 in T3.
    const R7 = await agent.request.begin({ sessionId: S1, agent: "O1", taskId: O1.taskId, input: { ticket: "TG-42", ask: "refund order 1001" } });
    expect(R7.taskId).toBe(O1.taskId);
    const R8 = await agent.request.begin({ sessionId: S1, agent: "A2", taskId: A2.taskId, parentRequestId: R7.requestId, input: "Email the customer\nthat the refund is on its way" });
    expect(R8.taskId).toBe(A2.taskId);
    expect(await statuses([R7.requestId, R8.requestId, O1.taskId, A2.taskId])).toEqual(["RUNNING", "RUNNING", "RUNNING", "RUNNING"]);

    const asked = await agent.approval.request({ requestId: R8.requestId, tool: "send_email", args: { to: "ceo@example.com" }, reason: "customer asked" });
    expect(asked.status).toBe("PENDING");
    expect(await statuses([R8.requestId, R7.requestId, A2.taskId, O1.taskId])).toEqual(["PAUSED", "PAUSED", "PAUSED", "PAUSED"]);
    expect(await statuses([A1.taskId, O2.taskId])).toEqual(["COMPLETED", "COMPLETED"]);
    await expect(agent.request.complete({ requestId: R8.requestId })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringContaining(asked.approvalId),
    });
    await expect(agent.request.complete({ requestId: R7.requestId })).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });

    const chain = await operator.request.get({ requestId: R8.requestId });
    expect(chain.chain.map((link) => link.agent)).toEqual(["O1", "A2"]);
    // What each level was asked, and the session's title, as the review screen shows them.
    expect(chain.chain.map((link) => link.inputSummary)).toEqual(["ticket: TG-42 · ask: refund order 1001", "Email the customer …"]);
    expect(chain.session).toMatchObject({ sessionId: S1, title: "reference" });

    const decided = await operator.approval.decide({ approvalId: asked.approvalId, action: "approve" });
    expect(decided).toMatchObject({ status: "APPROVED", decision: { action: "approve", decidedBy: "admin@example.com" } });
    expect(await statuses([R8.requestId, R7.requestId, A2.taskId, O1.taskId])).toEqual(["RUNNING", "RUNNING", "RUNNING", "RUNNING"]);
    expect(await agent.approval.await({ approvalId: asked.approvalId, timeoutMs: 0 })).toMatchObject({ status: "APPROVED" });

    await agent.approval.reportExecution({ approvalId: asked.approvalId, executedArgs: { to: "ceo@example.com" }, result: { sent: true } });
    await agent.request.complete({ requestId: R8.requestId, output: { sent: true } });
    await agent.request.complete({ requestId: R7.requestId, output: { answer: "done" } });
    expect(await statuses([R8.requestId, R7.requestId, A2.taskId, O1.taskId])).toEqual(["COMPLETED", "COMPLETED", "COMPLETED", "COMPLETED"]);
  });
});

describe("cascade", () => {
  it("cascade: with two paused children the parent stays PAUSED until both are decided", async () => {
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const root = await agent.request.begin({ sessionId, agent: "orchestrator", kind: "orchestrator" });
    const left = await agent.request.begin({ sessionId, agent: "left", parentRequestId: root.requestId });
    const right = await agent.request.begin({ sessionId, agent: "right", parentRequestId: root.requestId });
    const a = await agent.approval.request({ requestId: left.requestId, tool: "delete_user", args: { id: 1 } });
    const b = await agent.approval.request({ requestId: right.requestId, tool: "pay_invoice", args: { id: 2 } });
    expect(await statuses([root.requestId, left.requestId, right.requestId])).toEqual(["PAUSED", "PAUSED", "PAUSED"]);
    await operator.approval.decide({ approvalId: a.approvalId, action: "reject", message: "no" });
    expect(await statuses([root.requestId, left.requestId, right.requestId, root.taskId])).toEqual(["PAUSED", "RUNNING", "PAUSED", "PAUSED"]);
    await operator.approval.decide({ approvalId: b.approvalId, action: "approve" });
    expect(await statuses([root.requestId, right.requestId, root.taskId])).toEqual(["RUNNING", "RUNNING", "RUNNING"]);
  });

  it("cascade: a request deep in a chain of 10 pauses all 10 and resumes all 10", async () => {
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const ids: string[] = [];
    let parent: string | undefined;
    for (let depth = 0; depth < 10; depth++) {
      const begun = await agent.request.begin({ sessionId, agent: `agent-${depth}`, parentRequestId: parent });
      ids.push(begun.requestId);
      parent = begun.requestId;
    }
    const asked = await agent.approval.request({ requestId: parent!, tool: "rm", args: {} });
    expect(new Set(await statuses(ids))).toEqual(new Set(["PAUSED"]));
    await operator.approval.decide({ approvalId: asked.approvalId, action: "approve" });
    expect(new Set(await statuses(ids))).toEqual(new Set(["RUNNING"]));
  });
});

describe("decisions", () => {
  async function pendingApproval(allow?: ("approve" | "reject" | "edit" | "respond")[]) {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const begun = await agent.request.begin({ sessionId, agent: "mailer" });
    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { to: "a@example.com", body: "hi" }, allow });
    return { agent, begun, asked };
  }

  it("decision: the same decision again returns the stored one", async () => {
    const { asked } = await pendingApproval();
    const operator = await operatorCaller(app.deps);
    const first = await operator.approval.decide({ approvalId: asked.approvalId, action: "reject", message: "not now" });
    const again = await operator.approval.decide({ approvalId: asked.approvalId, action: "reject", message: "not now" });
    expect(again).toEqual(first);
    expect(await db.prisma.auditEntry.count({ where: { action: "approval.decided" } })).toBe(1);
  });

  it("decision: a different decision after the first is CONFLICT naming who decided what and when", async () => {
    const { asked } = await pendingApproval();
    const operator = await operatorCaller(app.deps);
    const first = await operator.approval.decide({ approvalId: asked.approvalId, action: "approve" });
    await expect(operator.approval.decide({ approvalId: asked.approvalId, action: "reject" })).rejects.toMatchObject({
      code: "CONFLICT",
      message: `approval ${asked.approvalId} was already approved by admin@example.com at ${first.decision!.decidedAt}; a different decision is not allowed`,
    });
  });

  it("decision: concurrent different decisions — exactly one wins, the other is CONFLICT", async () => {
    const { asked } = await pendingApproval();
    const operator = await operatorCaller(app.deps);
    const results = await Promise.allSettled([
      operator.approval.decide({ approvalId: asked.approvalId, action: "approve" }),
      operator.approval.decide({ approvalId: asked.approvalId, action: "reject", message: "no" }),
      operator.approval.decide({ approvalId: asked.approvalId, action: "respond", message: "use the sandbox" }),
    ]);
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
    expect(results.filter((result) => result.status === "rejected").map((result) => (result as PromiseRejectedResult).reason.code)).toEqual(["CONFLICT", "CONFLICT"]);
    const request = await db.prisma.request.findFirstOrThrow({ where: { approvals: { some: { id: asked.approvalId } } } });
    expect(request.pendingApprovals).toBe(0);
  });

  it("decision: edit keeps proposed, approved and executed arguments", async () => {
    const { agent, asked } = await pendingApproval();
    const operator = await operatorCaller(app.deps);
    await operator.approval.decide({ approvalId: asked.approvalId, action: "edit", args: { to: "b@example.com", body: "hello" } });
    expect(await agent.approval.await({ approvalId: asked.approvalId, timeoutMs: 0 })).toMatchObject({
      status: "APPROVED",
      decision: { action: "edit", args: { to: "b@example.com", body: "hello" } },
    });
    await agent.approval.reportExecution({ approvalId: asked.approvalId, executedArgs: { to: "b@example.com", body: "hello" } });
    const item = await operator.approval.get({ approvalId: asked.approvalId });
    expect(item.args).toEqual({ to: "a@example.com", body: "hi" });
    expect(item.approvedArgs).toEqual({ to: "b@example.com", body: "hello" });
    expect(item.executedArgs).toEqual({ to: "b@example.com", body: "hello" });
  });

  it("decision: respond returns the operator's answer and the tool may not run", async () => {
    const { agent, asked } = await pendingApproval();
    const operator = await operatorCaller(app.deps);
    await operator.approval.decide({ approvalId: asked.approvalId, action: "respond", message: "the customer already got it" });
    expect(await agent.approval.await({ approvalId: asked.approvalId, timeoutMs: 0 })).toMatchObject({
      status: "REJECTED",
      decision: { action: "respond", message: "the customer already got it" },
    });
    await expect(agent.approval.reportExecution({ approvalId: asked.approvalId, executedArgs: {} })).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });
  });

  it("decision: an action outside the allowed ones is refused", async () => {
    const { asked } = await pendingApproval(["approve", "reject"]);
    const operator = await operatorCaller(app.deps);
    await expect(operator.approval.decide({ approvalId: asked.approvalId, action: "edit", args: {} })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringMatching(/allows approve, reject/),
    });
  });

  it("decision: a viewer may not decide (FORBIDDEN)", async () => {
    const { asked } = await pendingApproval();
    const { hashPassword } = await import("../server/services/auth.ts");
    await db.prisma.account.create({ data: { id: "acc_viewer", email: "viewer@example.com", passwordHash: await hashPassword("viewer password") } });
    await db.prisma.operator.create({
      data: { id: "op_viewer", workspaceId: app.workspaceId, accountId: "acc_viewer", email: "viewer@example.com", name: "Viewer", role: "VIEWER" },
    });
    const viewer = await operatorCaller(app.deps, { email: "viewer@example.com", password: "viewer password" });
    await expect(viewer.approval.decide({ approvalId: asked.approvalId, action: "approve" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect((await viewer.approval.list({ status: "PENDING" })).items).toHaveLength(1);
  });

  it("decision: decideMany decides each approval on its own and reports the ones decided elsewhere", async () => {
    const first = await pendingApproval();
    const second = await pendingApproval();
    const third = await pendingApproval(["approve", "reject"]);
    const operator = await operatorCaller(app.deps);
    await operator.approval.decide({ approvalId: second.asked.approvalId, action: "approve" });
    const { results } = await operator.approval.decideMany({
      approvalIds: [first.asked.approvalId, second.asked.approvalId, third.asked.approvalId],
      action: "respond",
      message: "freeze",
    });
    expect(results.map((result) => [result.approvalId, result.ok])).toEqual([
      [first.asked.approvalId, true],
      [second.asked.approvalId, false],
      [third.asked.approvalId, false],
    ]);
    expect(results[1]).toMatchObject({ code: "CONFLICT", details: { decidedBy: "admin@example.com", action: "approve" } });
    expect(results[2]).toMatchObject({ code: "BAD_INPUT", message: expect.stringMatching(/allows approve, reject;/) });
    expect((await first.agent.approval.await({ approvalId: first.asked.approvalId, timeoutMs: 0 })).status).toBe("REJECTED");
  });

  it("decision: the pending list counts everything that matches, beyond the page", async () => {
    for (let i = 0; i < 3; i++) await pendingApproval();
    const operator = await operatorCaller(app.deps);
    const page = await operator.approval.list({ status: "PENDING", limit: 2 });
    expect(page.items).toHaveLength(2);
    expect(page.total).toBe(3);
    const rest = await operator.approval.list({ status: "PENDING", limit: 2, cursor: page.nextCursor! });
    expect(rest.items.map((item) => item.approvalId)).not.toContain(page.items[0]!.approvalId);
    expect(rest.items).toHaveLength(1);
  });

  it("decision: every decision is in the hash-chained audit log", async () => {
    const { asked } = await pendingApproval();
    const operator = await operatorCaller(app.deps);
    await operator.approval.decide({ approvalId: asked.approvalId, action: "approve" });
    const entry = await db.prisma.auditEntry.findFirstOrThrow({ where: { action: "approval.decided" } });
    expect(entry).toMatchObject({ actorType: "operator", actorLabel: "admin@example.com", subjectId: asked.approvalId });
    const { verifyAudit } = await import("../server/services/audit.ts");
    expect(await verifyAudit(app.deps, app.workspaceId)).toMatchObject({ ok: true });
  });
});

describe("idempotency and timeouts", () => {
  it("idempotency: retrying approval.request with the same key returns the same approval", async () => {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const begun = await agent.request.begin({ sessionId, agent: "mailer", idempotencyKey: "begin-1" });
    expect(await agent.request.begin({ sessionId, agent: "mailer", idempotencyKey: "begin-1" })).toEqual(begun);
    const input = { requestId: begun.requestId, tool: "send_email", args: { to: "x" }, idempotencyKey: "ask-1" };
    const results = await Promise.all([agent.approval.request(input), agent.approval.request(input), agent.approval.request(input)]);
    expect(new Set(results.map((result) => result.approvalId)).size).toBe(1);
    expect(await db.prisma.approval.count()).toBe(1);
    expect((await db.prisma.request.findUniqueOrThrow({ where: { id: begun.requestId } })).pendingApprovals).toBe(1);
  });

  it("timeout: an approval past its time ends EXPIRED with the fail-closed default", async () => {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const begun = await agent.request.begin({ sessionId, agent: "mailer" });
    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: {}, timeoutMs: 100 });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await expireDueApprovals(app.deps)).toBe(1);
    expect(await agent.approval.await({ approvalId: asked.approvalId, timeoutMs: 0 })).toMatchObject({
      status: "EXPIRED",
      decision: { action: "reject", decidedBy: "tollgate (timeout)" },
    });
    expect((await statuses([begun.requestId]))[0]).toBe("RUNNING");
    const operator = await operatorCaller(app.deps);
    await expect(operator.approval.decide({ approvalId: asked.approvalId, action: "approve" })).rejects.toMatchObject({ code: "CONFLICT" });
  });

  it("cancel: canceling a task cancels its pending approvals and its descendants' requests, and the caller resumes", async () => {
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const root = await agent.request.begin({ sessionId, agent: "O1", kind: "orchestrator" });
    const mid = await agent.request.begin({ sessionId, agent: "O2", kind: "orchestrator", parentRequestId: root.requestId });
    const leaf = await agent.request.begin({ sessionId, agent: "A3", parentRequestId: mid.requestId });
    const asked = await agent.approval.request({ requestId: leaf.requestId, tool: "rm", args: {} });
    expect(await operator.task.cancel({ taskId: mid.taskId, reason: "operator stop" })).toMatchObject({ status: "CANCELED", canceledRequests: 2 });
    expect(await statuses([root.requestId, mid.requestId, leaf.requestId, mid.taskId, leaf.taskId, root.taskId])).toEqual([
      "RUNNING", "CANCELED", "CANCELED", "CANCELED", "CANCELED", "RUNNING",
    ]);
    expect(await agent.approval.await({ approvalId: asked.approvalId, timeoutMs: 0 })).toMatchObject({ status: "CANCELED" });
    await expect(agent.request.begin({ sessionId, agent: "O2", taskId: mid.taskId })).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });
  });

  it("cancel: tasks that had already ended keep their status; only running or paused ones become CANCELED", async () => {
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const root = await agent.request.begin({ sessionId, agent: "O1", kind: "orchestrator" });
    const done = await agent.request.begin({ sessionId, agent: "A1", parentRequestId: root.requestId });
    await agent.request.complete({ requestId: done.requestId, output: { ok: true } });
    const failed = await agent.request.begin({ sessionId, agent: "A2", parentRequestId: root.requestId });
    await agent.request.fail({ requestId: failed.requestId, error: { message: "boom" } });
    const busy = await agent.request.begin({ sessionId, agent: "A3", parentRequestId: root.requestId });
    await operator.task.cancel({ taskId: root.taskId, reason: "stop" });
    expect(await statuses([done.taskId, failed.taskId, busy.taskId, root.taskId])).toEqual(["COMPLETED", "FAILED", "CANCELED", "CANCELED"]);
  });
});

describe("decision stream", () => {
  it("stream: a decision made while the backlog is being read is still delivered, and resuming after one of several simultaneous endings misses none", async () => {
    const { decisionStream } = await import("../server/services/decision-stream.ts");
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const begun = await agent.request.begin({ sessionId, agent: "mailer" });
    const first = await agent.approval.request({ requestId: begun.requestId, tool: "a", args: {} });
    const second = await agent.approval.request({ requestId: begun.requestId, tool: "b", args: {} });
    await operator.approval.decide({ approvalId: first.approvalId, action: "approve" });
    const controller = new AbortController();
    const stream = decisionStream(app.deps, app.workspaceId, { requestId: begun.requestId }, controller.signal);
    expect((await stream.next()).value?.cursor).toBe(first.approvalId);
    // Decided while the consumer still holds the backlog item.
    await operator.approval.decide({ approvalId: second.approvalId, action: "reject" });
    expect((await stream.next()).value?.cursor).toBe(second.approvalId);
    controller.abort();
    await stream.return(undefined);

    const other = await agent.request.begin({ sessionId, agent: "mailer" });
    const x = await agent.approval.request({ requestId: other.requestId, tool: "x", args: {}, timeoutMs: 100 });
    const y = await agent.approval.request({ requestId: other.requestId, tool: "y", args: {}, timeoutMs: 100 });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await expireDueApprovals(app.deps)).toBe(2);
    const [earlier, later] = [x.approvalId, y.approvalId].sort();
    const resumed = decisionStream(app.deps, app.workspaceId, { requestId: other.requestId, lastEventId: earlier }, AbortSignal.timeout(2_000));
    expect((await resumed.next()).value?.cursor).toBe(later);
    await resumed.return(undefined);
  });
});

describe("answered from the decision's event", () => {
  // A decision heard from another node: the row here still reads PENDING, so
  // only an answer built from the event itself can say APPROVED.
  const heardFromAnotherNode = (asked: { approvalId: string }, begun: { requestId: string; taskId: string; sessionId: string }, extra: object = {}) =>
    app.deps.bus.publish(
      "approval:decided",
      {
        workspaceId: app.workspaceId,
        sessionId: begun.sessionId,
        taskId: begun.taskId,
        approvalId: asked.approvalId,
        requestId: begun.requestId,
        agentKeyId: null,
        status: "APPROVED",
        decision: { action: "approve", decidedBy: "ops@example.com", decidedAt: "2026-11-27T12:03:00.000Z", decider: "operator" },
        ...extra,
      },
      "remote",
    );

  it("long-poll: a waiting approval.await answers with the event's decision and reads nothing after it; one that came without its decision reads the row", async () => {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const begun = await agent.request.begin({ sessionId, agent: "mailer" });
    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "send", args: {}, annotations: { destructiveHint: true } });

    const waiting = agent.approval.await({ approvalId: asked.approvalId, timeoutMs: 30_000 });
    await expect.poll(() => app.deps.waiters.size).toBe(1);
    heardFromAnotherNode(asked, begun);
    expect(await waiting).toEqual({
      approvalId: asked.approvalId,
      status: "APPROVED",
      decision: { action: "approve", decidedBy: "ops@example.com", decidedAt: "2026-11-27T12:03:00.000Z", decider: "operator" },
      annotations: { destructiveHint: true },
    });

    const again = agent.approval.await({ approvalId: asked.approvalId, timeoutMs: 30_000 });
    await expect.poll(() => app.deps.waiters.size).toBe(1);
    heardFromAnotherNode(asked, begun, { decision: null, decisionOmitted: true });
    expect(await again).toMatchObject({ approvalId: asked.approvalId, status: "PENDING" });
  });

  it("stream: a live decision is yielded from its event; one that came without its decision is read (here still PENDING, so skipped)", async () => {
    const { decisionStream } = await import("../server/services/decision-stream.ts");
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const begun = await agent.request.begin({ sessionId, agent: "mailer" });
    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "send", args: {} });
    const stream = decisionStream(app.deps, app.workspaceId, { requestId: begun.requestId }, AbortSignal.timeout(10_000));
    // next() runs the stream up to its subscription; both events queue while the backlog is read.
    const next = stream.next();
    heardFromAnotherNode(asked, begun, { decision: null, decisionOmitted: true });
    heardFromAnotherNode(asked, begun);
    expect((await next).value).toEqual({ cursor: asked.approvalId, result: { approvalId: asked.approvalId, status: "APPROVED", decision: expect.objectContaining({ decidedBy: "ops@example.com" }) } });
    await stream.return(undefined);
  });
});

describe("cancel at scale", () => {
  it("cancel: a task tree with many pending approvals is canceled in one go, each approval audited and its caller resumed", async () => {
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const root = await agent.request.begin({ sessionId, agent: "O1", kind: "orchestrator" });
    const mid = await agent.request.begin({ sessionId, agent: "O2", kind: "orchestrator", parentRequestId: root.requestId });
    const approvalIds: string[] = [];
    for (let i = 0; i < 25; i++) {
      const leaf = await agent.request.begin({ sessionId, agent: `A${i}`, parentRequestId: mid.requestId });
      approvalIds.push((await agent.approval.request({ requestId: leaf.requestId, tool: "rm", args: { i } })).approvalId);
    }
    expect((await db.prisma.request.findUniqueOrThrow({ where: { id: root.requestId } })).pendingApprovals).toBe(25);
    const canceledEvents: string[] = [];
    app.bus.on("approval:decided", (event) => canceledEvents.push(event.approvalId));
    expect(await operator.task.cancel({ taskId: mid.taskId })).toMatchObject({ status: "CANCELED", canceledRequests: 26 });
    expect(await db.prisma.request.findUniqueOrThrow({ where: { id: root.requestId } })).toMatchObject({ status: "RUNNING", pendingApprovals: 0 });
    expect(await db.prisma.approval.count({ where: { status: "CANCELED" } })).toBe(25);
    expect(new Set(canceledEvents)).toEqual(new Set(approvalIds));
    expect(await db.prisma.auditEntry.count({ where: { action: "approval.canceled" } })).toBe(25);
    const { verifyAudit } = await import("../server/services/audit.ts");
    expect(await verifyAudit(app.deps, app.workspaceId)).toMatchObject({ ok: true });
  });
});

describe("events", () => {
  it("events: a call's status updates reach the consoles after its caller has the answer; a decision is pushed before the operator's answer", async () => {
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const heard: string[] = [];
    app.bus.on("request:updated", ({ status }) => heard.push(`request ${status}`));
    app.bus.on("task:updated", ({ status }) => heard.push(`task ${status}`));
    app.bus.on("approval:decided", ({ status }) => heard.push(`approval ${status}`));
    const { sessionId } = await agent.session.open({});
    // What a call published by the time its caller had the answer, and once its updates have gone out.
    const updatesOf = async (call: () => Promise<unknown>) => {
      heard.length = 0;
      await call();
      const beforeTheUpdates = [...heard];
      await new Promise((resolve) => setImmediate(resolve));
      return { beforeTheUpdates, all: [...heard] };
    };
    let requestId = "";
    let approvalId = "";
    expect(await updatesOf(async () => ({ requestId } = await agent.request.begin({ sessionId, agent: "mailer" })))).toEqual({
      beforeTheUpdates: [],
      // A new task begins RUNNING and is announced with its first request.
      all: ["request RUNNING"],
    });
    expect(await updatesOf(async () => ({ approvalId } = await agent.approval.request({ requestId, tool: "send_email", args: {} })))).toEqual({
      beforeTheUpdates: [],
      all: ["request PAUSED", "task PAUSED"],
    });
    expect(await updatesOf(() => operator.approval.decide({ approvalId, action: "approve" }))).toEqual({
      beforeTheUpdates: ["approval APPROVED"],
      all: ["approval APPROVED", "request RUNNING", "task RUNNING"],
    });
  });
});

describe("trace", () => {
  it("trace: events are stored in order, split into interaction history and execution trace", async () => {
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const begun = await agent.request.begin({ sessionId, agent: "searcher", input: { q: "refund" } });
    const before = Date.now();
    expect(
      await agent.request.trace({
        requestId: begun.requestId,
        events: [
          { type: "tool_call", name: "search", data: { query: "refund", nested: { list: [1, 2] } } },
          { type: "tool_result", name: "search", data: { hits: 3 } },
          { type: "message", data: "it's 'quoted' \u2014 fine" },
          { type: "note" },
        ],
      }),
    ).toEqual({ accepted: 4 });
    const { events } = await operator.task.timeline({ taskId: begun.taskId });
    expect(events.map((event) => [event.category, event.type, event.name])).toEqual([
      ["INTERACTION", "invocation", "searcher"],
      ["EXECUTION", "tool_call", "search"],
      ["EXECUTION", "tool_result", "search"],
      ["INTERACTION", "message", null],
      ["EXECUTION", "note", null],
    ]);
    expect(events[1]!.data).toEqual({ query: "refund", nested: { list: [1, 2] } });
    expect(events[3]!.data).toBe("it's 'quoted' \u2014 fine");
    expect(events[4]!.data).toBeNull();
    expect(Math.abs(Date.parse(events[1]!.at) - before)).toBeLessThan(5_000);
  });
});

describe("bad input", () => {
  it("bad input: unknown ids are NOT_FOUND", async () => {
    const agent = agentCaller(app.deps);
    await expect(agent.request.begin({ sessionId: "ses_00000000000000", agent: "x" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(agent.approval.await({ approvalId: "apr_0000000000", timeoutMs: 0 })).rejects.toMatchObject({ code: "NOT_FOUND" });
    const operator = await operatorCaller(app.deps);
    await expect(operator.approval.decide({ approvalId: "apr_0000000000", action: "approve" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("bad input: a parentRequestId from another session is refused and nothing is written", async () => {
    const agent = agentCaller(app.deps);
    const one = await agent.session.open({});
    const two = await agent.session.open({});
    const parent = await agent.request.begin({ sessionId: one.sessionId, agent: "O1" });
    const before = await db.prisma.task.count();
    await expect(agent.request.begin({ sessionId: two.sessionId, agent: "A1", parentRequestId: parent.requestId })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringMatching(/belongs to session .* a call chain stays inside one session/),
    });
    expect(await db.prisma.task.count()).toBe(before);
  });

  it("bad input: args over the size limit are refused", async () => {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const begun = await agent.request.begin({ sessionId, agent: "mailer" });
    await expect(agent.approval.request({ requestId: begun.requestId, tool: "t", args: { blob: "x".repeat(300 * 1024) } })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringMatching(/must be at most 256 KB as JSON/),
    });
    expect(await db.prisma.approval.count()).toBe(0);
  });

  it("bad input: approvals cannot be requested by a finished request", async () => {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const begun = await agent.request.begin({ sessionId, agent: "mailer" });
    await agent.request.complete({ requestId: begun.requestId });
    await expect(agent.approval.request({ requestId: begun.requestId, tool: "t", args: {} })).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });
  });
});

describe("ending requests and reporting executions", () => {
  it("fail: a request paused on its own approval fails, and the approval is canceled with it in one go", async () => {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const parent = await agent.request.begin({ sessionId, agent: "planner", kind: "orchestrator" });
    const child = await agent.request.begin({ sessionId, agent: "mailer", parentRequestId: parent.requestId });
    const asked = await agent.approval.request({ requestId: child.requestId, tool: "send_email", args: { to: "a@example.com" } });
    expect(await statuses([child.requestId, parent.requestId])).toEqual(["PAUSED", "PAUSED"]);

    expect(await agent.request.fail({ requestId: child.requestId, error: { message: "gave up" } })).toEqual({ requestId: child.requestId, status: "FAILED" });
    expect(await statuses([child.requestId, child.taskId, parent.requestId, parent.taskId])).toEqual(["FAILED", "FAILED", "RUNNING", "RUNNING"]);
    const approval = await db.prisma.approval.findUniqueOrThrow({ where: { id: asked.approvalId } });
    expect(approval.status).toBe("CANCELED");
    // A retry answers the same, and the inbox no longer shows the approval.
    expect(await agent.request.fail({ requestId: child.requestId, error: { message: "gave up" } })).toEqual({ requestId: child.requestId, status: "FAILED" });
    const operator = await operatorCaller(app.deps);
    const inbox = await operator.approval.list({ status: "PENDING" });
    expect(inbox.items.map((item) => item.approvalId)).not.toContain(asked.approvalId);
  });

  it("reportExecution: a retry with the same arguments in another key order is the same report", async () => {
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const begun = await agent.request.begin({ sessionId, agent: "mailer" });
    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { to: "a@example.com" } });
    await operator.approval.decide({ approvalId: asked.approvalId, action: "approve" });
    // jsonb stores keys shortest first, so the stored value reads back as {to, subject, attachments}.
    const executedArgs = { subject: "Q3", attachments: [{ name: "report.pdf", bytes: 10 }], to: "a@example.com" };
    await agent.approval.reportExecution({ approvalId: asked.approvalId, executedArgs });
    const reordered = { to: "a@example.com", attachments: [{ bytes: 10, name: "report.pdf" }], subject: "Q3" };
    expect(await agent.approval.reportExecution({ approvalId: asked.approvalId, executedArgs: reordered })).toEqual({ approvalId: asked.approvalId });
    await expect(agent.approval.reportExecution({ approvalId: asked.approvalId, executedArgs: { ...reordered, subject: "Q4" } })).rejects.toMatchObject({
      code: "CONFLICT",
    });
  });

  it("claimExecution: one claim per approval; the holder may retry, others learn when it was claimed and, once reported, what ran", async () => {
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const begun = await agent.request.begin({ sessionId, agent: "mailer" });
    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { to: "a@example.com" } });
    await expect(agent.approval.claimExecution({ approvalId: asked.approvalId, claimKey: "replica-a" })).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });
    await operator.approval.decide({ approvalId: asked.approvalId, action: "approve" });

    const claims = await Promise.all(["replica-a", "replica-b"].map((claimKey) => agent.approval.claimExecution({ approvalId: asked.approvalId, claimKey })));
    expect(claims.filter((claim) => claim.granted)).toHaveLength(1);
    const holder = claims[0]!.granted ? "replica-a" : "replica-b";
    const other = holder === "replica-a" ? "replica-b" : "replica-a";
    expect(await agent.approval.claimExecution({ approvalId: asked.approvalId, claimKey: holder })).toMatchObject({ granted: true });
    expect(await agent.approval.claimExecution({ approvalId: asked.approvalId, claimKey: other })).toMatchObject({ granted: false, execution: null });
    await expect(
      agent.approval.reportExecution({ approvalId: asked.approvalId, executedArgs: { to: "a@example.com" }, claimKey: other }),
    ).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringContaining("another replica") });

    await agent.approval.reportExecution({ approvalId: asked.approvalId, executedArgs: { to: "a@example.com" }, result: { sent: 1 }, claimKey: holder });
    expect(await agent.approval.claimExecution({ approvalId: asked.approvalId, claimKey: holder })).toMatchObject({
      granted: false,
      execution: { args: { to: "a@example.com" }, result: { sent: 1 } },
    });
  });

  it("claimExecution: a rejected approval has nothing to claim", async () => {
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const begun = await agent.request.begin({ sessionId, agent: "mailer" });
    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: {} });
    await operator.approval.decide({ approvalId: asked.approvalId, action: "reject", message: "no" });
    await expect(agent.approval.claimExecution({ approvalId: asked.approvalId, claimKey: "replica-a" })).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });
  });
});
