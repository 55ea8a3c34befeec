// Authority between the agent keys of one workspace, through the router: a key
// acts on the work it began, the work below it, and work of agents an admin
// trusted it for; anything else answers NOT_FOUND exactly like an unknown id.
import { describe, expect, it } from "vitest";
import { TRPCError } from "@trpc/server";
import { addPersonWith, agentCaller, operatorCaller, useFreshApp, type TestApp, type TestDatabase } from "./harness.ts";

let db: TestDatabase;
let app: TestApp;
useFreshApp((created) => (db = created), (fresh) => (app = fresh));

const UNKNOWN = { apr: `apr_${"0".repeat(22)}`, req: `req_${"0".repeat(22)}`, tsk: `tsk_${"0".repeat(22)}` };
const asState = (value: object) => value as Record<string, never>;

/** A second agent key of the workspace, made the way an admin makes one. */
async function newAgentKey(name: string) {
  const admin = await operatorCaller(app.deps);
  const created = await admin.agentKey.create({ name });
  return { id: created.id, agent: agentCaller(app.deps, created.key) };
}

interface Refusal {
  code: string;
  message: string;
  details: unknown;
}

async function refusalOf(call: Promise<unknown>): Promise<Refusal> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof TRPCError)) throw error;
    return { code: error.code, message: error.message, details: (error.cause as { details?: unknown } | undefined)?.details ?? null };
  }
  throw new Error("the call was expected to be refused, but it succeeded");
}

/**
 * `call(id)` on another key's existing id must be NOT_FOUND and read exactly
 * like `call(unknownId)`: same code, same message but for the id, same details.
 */
async function expectRefusedLikeUnknown(call: (id: string) => Promise<unknown>, id: string, unknownId: string) {
  const forExisting = await refusalOf(call(id));
  const forUnknown = await refusalOf(call(unknownId));
  expect(forExisting.code).toBe("NOT_FOUND");
  expect(forExisting.message).toContain(id);
  expect({ ...forExisting, message: forExisting.message.replaceAll(id, "<id>") }).toEqual({
    ...forUnknown,
    message: forUnknown.message.replaceAll(unknownId, "<id>"),
  });
}

/** Every row an agent call could write, to show that a refused call wrote nothing. */
async function rows() {
  const byId = { orderBy: { id: "asc" as const } };
  return {
    approvals: await db.prisma.approval.findMany(byId),
    requests: await db.prisma.request.findMany(byId),
    tasks: await db.prisma.task.findMany(byId),
    traces: await db.prisma.traceEvent.count(),
    configs: await db.prisma.threadConfig.findMany({ orderBy: { taskId: "asc" } }),
    states: await db.prisma.agentStateVersion.count(),
    continuity: await db.prisma.threadContinuity.count(),
    entities: await db.prisma.threadEntity.count(),
    audit: await db.prisma.auditEntry.count(),
  };
}

/** The first event of a decision stream; a caller sees each tracked event as [id, data]. */
async function firstDecision(stream: AsyncIterable<unknown>) {
  for await (const event of stream) {
    const [id, data] = event as [string, { status: string }];
    return { id, data };
  }
  return undefined;
}

describe("another key's work", () => {
  it("authority: a second key gets NOT_FOUND on every call naming another key's approval, request or task, as for an unknown id, and nothing is written", async () => {
    const owner = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await owner.session.open({});
    const R = await owner.request.begin({ sessionId, agent: "A2" });
    await owner.thread.configure({ taskId: R.taskId, config: {} });
    await owner.state.save({ taskId: R.taskId, requestId: R.requestId, state: asState({ notes: ["mine"] }) });
    const asked = await owner.approval.request({ requestId: R.requestId, tool: "send_email", args: { to: "ceo@example.com" } });
    await operator.approval.decide({ approvalId: asked.approvalId, action: "approve" });

    const { agent: other } = await newAgentKey("other service");
    const { sessionId: otherSession } = await other.session.open({});
    const own = await other.request.begin({ sessionId: otherSession, agent: "B1" });
    await other.thread.configure({ taskId: own.taskId, config: {} });
    const before = await rows();

    const approval = asked.approvalId;
    await expectRefusedLikeUnknown((id) => other.approval.await({ approvalId: id, timeoutMs: 0 }), approval, UNKNOWN.apr);
    await expectRefusedLikeUnknown((id) => other.approval.reportExecution({ approvalId: id, executedArgs: { forged: true } }), approval, UNKNOWN.apr);
    await expectRefusedLikeUnknown((id) => other.approval.onDecision({ requestId: id }), R.requestId, UNKNOWN.req);
    await expectRefusedLikeUnknown((id) => other.approval.onDecision({ taskId: id }), R.taskId, UNKNOWN.tsk);
    await expectRefusedLikeUnknown((id) => other.approval.request({ requestId: id, tool: "send_email", args: { to: "x@example.com" } }), R.requestId, UNKNOWN.req);

    await expectRefusedLikeUnknown((id) => other.request.complete({ requestId: id, output: { hijacked: true } }), R.requestId, UNKNOWN.req);
    await expectRefusedLikeUnknown((id) => other.request.fail({ requestId: id, error: { message: "hijacked" } }), R.requestId, UNKNOWN.req);
    await expectRefusedLikeUnknown((id) => other.request.trace({ requestId: id, events: [{ type: "tool_call", name: "forged" }] }), R.requestId, UNKNOWN.req);
    await expectRefusedLikeUnknown((id) => other.request.begin({ sessionId, agent: "A2", taskId: id }), R.taskId, UNKNOWN.tsk);
    // Naming a request of its own as the caller gives no authority over the task.
    await expectRefusedLikeUnknown(
      (id) => other.request.begin({ sessionId: otherSession, agent: "A2", taskId: id, parentRequestId: own.requestId }),
      R.taskId,
      UNKNOWN.tsk,
    );

    await expectRefusedLikeUnknown((id) => other.state.load({ taskId: id }), R.taskId, UNKNOWN.tsk);
    await expectRefusedLikeUnknown((id) => other.state.save({ taskId: id, requestId: own.requestId, state: asState({ notes: ["theirs"] }) }), R.taskId, UNKNOWN.tsk);
    // Its own task, written with another key's request: the request is not found.
    await expectRefusedLikeUnknown((id) => other.state.save({ taskId: own.taskId, requestId: id, state: asState({ notes: [] }) }), R.requestId, UNKNOWN.req);
    await expectRefusedLikeUnknown((id) => other.state.remember({ taskId: id, requestId: own.requestId, memory: { "mem.x": 1 } }), R.taskId, UNKNOWN.tsk);
    await expectRefusedLikeUnknown((id) => other.thread.configure({ taskId: id, config: { enabledTools: [] } }), R.taskId, UNKNOWN.tsk);
    await expectRefusedLikeUnknown((id) => other.continuity.load({ taskId: R.taskId, requestId: id }), R.requestId, UNKNOWN.req);
    await expectRefusedLikeUnknown(
      (id) => other.continuity.record({ strategy: "reference", taskId: R.taskId, requestId: id, conversationId: "cnv_forged" }),
      R.requestId,
      UNKNOWN.req,
    );
    await expectRefusedLikeUnknown((id) => other.context.touch({ taskId: id, requestId: own.requestId, entities: [{ id: "e1", name: "forged" }] }), R.taskId, UNKNOWN.tsk);
    await expectRefusedLikeUnknown((id) => other.context.touch({ taskId: own.taskId, requestId: id, entities: [{ id: "e1", name: "forged" }] }), R.requestId, UNKNOWN.req);
    await expectRefusedLikeUnknown((id) => other.context.assemble({ taskId: id }), R.taskId, UNKNOWN.tsk);
    await expectRefusedLikeUnknown((id) => other.task.cancelAsAgent({ taskId: id }), R.taskId, UNKNOWN.tsk);

    expect(await rows()).toEqual(before);
    const approvalRow = await db.prisma.approval.findUniqueOrThrow({ where: { id: approval } });
    expect(approvalRow).toMatchObject({ executedArgs: null, executedAt: null });

    // The owner's own calls still work.
    expect((await owner.state.load({ taskId: R.taskId })).state).toEqual({ notes: ["mine"] });
    await owner.approval.reportExecution({ approvalId: approval, executedArgs: { to: "ceo@example.com" } });
    expect(await owner.request.complete({ requestId: R.requestId })).toEqual({ requestId: R.requestId, status: "COMPLETED" });
  });

  it("authority: idempotency keys belong to the agent key: another key using the same ones gets work of its own, and neither stalls the other's retries", async () => {
    const owner = agentCaller(app.deps);
    const { sessionId } = await owner.session.open({});
    const R = await owner.request.begin({ sessionId, agent: "A2", idempotencyKey: "begin-1" });
    const asked = await owner.approval.request({ requestId: R.requestId, tool: "send_email", args: {}, idempotencyKey: "ask-1" });
    const { agent: other } = await newAgentKey("other service");
    const own = await other.request.begin({ sessionId, agent: "B1" });

    // The other key, using the owner's names first or after: its own request and approval, no 409.
    const theirs = await other.request.begin({ sessionId, agent: "A2", idempotencyKey: "begin-1" });
    expect(theirs.requestId).not.toBe(R.requestId);
    const theirAsk = await other.approval.request({ requestId: own.requestId, tool: "send_email", args: {}, idempotencyKey: "ask-1" });
    expect(theirAsk.approvalId).not.toBe(asked.approvalId);
    // Each key's retries answer with its own work.
    expect(await owner.request.begin({ sessionId, agent: "A2", idempotencyKey: "begin-1" })).toEqual(R);
    expect((await owner.approval.request({ requestId: R.requestId, tool: "send_email", args: {}, idempotencyKey: "ask-1" })).approvalId).toBe(asked.approvalId);
    expect(await other.request.begin({ sessionId, agent: "A2", idempotencyKey: "begin-1" })).toEqual(theirs);
    expect((await other.approval.request({ requestId: own.requestId, tool: "send_email", args: {}, idempotencyKey: "ask-1" })).approvalId).toBe(theirAsk.approvalId);
  });
});

/** What a caller passes on to the agent it calls. */
const pick = ({ parentRequestId, delegation }: { parentRequestId: string; delegation: string }) => ({ parentRequestId, delegation });

describe("child requests under another key's request", () => {
  it("authority: a second key cannot attach a child to your request and stall it: without your key's delegation token it is NOT_FOUND, as for an unknown id, and nothing is written", async () => {
    const owner = agentCaller(app.deps);
    const { sessionId } = await owner.session.open({});
    const R = await owner.request.begin({ sessionId, agent: "O1", kind: "orchestrator" });
    const other = await owner.request.begin({ sessionId, agent: "O2", kind: "orchestrator" });
    const { agent: intruder } = await newAgentKey("intruder");
    const before = await rows();

    await expectRefusedLikeUnknown((id) => intruder.request.begin({ sessionId, agent: "A9", parentRequestId: id }), R.requestId, UNKNOWN.req);
    await expectRefusedLikeUnknown((id) => intruder.run.begin({ runId: "run-1", holder: "h", sessionId, agent: "A9", parentRequestId: id }), R.requestId, UNKNOWN.req);
    // A token for another request of the owner's, or one that expired, is no token for this one.
    const forOther = await owner.request.delegate({ requestId: other.requestId });
    await expectRefusedLikeUnknown((id) => intruder.request.begin({ sessionId, agent: "A9", parentRequestId: id, delegation: forOther.delegation }), R.requestId, UNKNOWN.req);
    const handed = await owner.request.delegate({ requestId: R.requestId, ttlSeconds: 60 });
    const later = app.deps.now;
    app.deps.now = () => new Date(Date.parse(handed.expiresAt));
    try {
      await expectRefusedLikeUnknown((id) => intruder.request.begin({ sessionId, agent: "A9", parentRequestId: id, delegation: handed.delegation }), R.requestId, UNKNOWN.req);
    } finally {
      app.deps.now = later;
    }
    // Nor does the intruder get a token for a request that is not its own.
    await expectRefusedLikeUnknown((id) => intruder.request.delegate({ requestId: id }), R.requestId, UNKNOWN.req);
    expect(await rows()).toEqual(before);

    // The owner's request never paused: it completes.
    expect(await owner.request.complete({ requestId: R.requestId })).toEqual({ requestId: R.requestId, status: "COMPLETED" });
  });

  it("authority: with the owner's token the called key's child pauses the owner's request, as a chain should; the workspace setting keeps the old behaviour, audited", async () => {
    const owner = agentCaller(app.deps);
    const admin = await operatorCaller(app.deps);
    const { sessionId } = await owner.session.open({});
    const R = await owner.request.begin({ sessionId, agent: "O1", kind: "orchestrator" });
    const { agent: called } = await newAgentKey("called service");
    const child = await called.request.begin({ sessionId, agent: "A1", ...pick(await owner.request.delegate({ requestId: R.requestId })) });
    await called.approval.request({ requestId: child.requestId, tool: "send_email", args: {} });
    expect((await db.prisma.request.findUniqueOrThrow({ where: { id: R.requestId } })).status).toBe("PAUSED");
    // A durable run begins under a delegated parent the same way.
    const run = await called.run.begin({ runId: "run-1", holder: "h", sessionId, agent: "A2", ...pick(await owner.request.delegate({ requestId: R.requestId })) });
    expect((await db.prisma.request.findUniqueOrThrow({ where: { id: run.requestId } })).parentRequestId).toBe(R.requestId);

    expect(await admin.workspace.settings()).toMatchObject({ allowUndelegatedChildren: false });
    expect(await admin.workspace.updateSettings({ allowUndelegatedChildren: true })).toMatchObject({ allowUndelegatedChildren: true });
    const { agent: legacy } = await newAgentKey("legacy service");
    const undelegated = await legacy.request.begin({ sessionId, agent: "A3", parentRequestId: R.requestId });
    expect((await db.prisma.request.findUniqueOrThrow({ where: { id: undelegated.requestId } })).parentRequestId).toBe(R.requestId);
    await admin.workspace.updateSettings({ allowUndelegatedChildren: false });
    await expectRefusedLikeUnknown((id) => legacy.request.begin({ sessionId, agent: "A3", parentRequestId: id }), R.requestId, UNKNOWN.req);
    const audited = await db.prisma.auditEntry.findMany({ where: { action: "workspace.settings_changed" }, orderBy: { seq: "asc" } });
    expect(audited.map((entry) => (entry.data as { after: { allowUndelegatedChildren: boolean } }).after.allowUndelegatedChildren)).toEqual([true, false]);
  });
});

describe("delegation by the call chain", () => {
  it("authority: the orchestrator's key acts on the child and grandchild requests other keys began under it; a sibling's key does not, nor a child's key on its parent", async () => {
    const orchestrator = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { agent: childKey } = await newAgentKey("A service");
    const { agent: siblingKey } = await newAgentKey("B service");
    const { sessionId } = await orchestrator.session.open({});
    const O1 = await orchestrator.request.begin({ sessionId, agent: "O1", kind: "orchestrator" });
    // The orchestrator's key hands the services it calls a token for its request: that is how a chain crosses keys.
    const handed = await orchestrator.request.delegate({ requestId: O1.requestId });
    expect(handed).toMatchObject({ parentRequestId: O1.requestId, delegation: expect.stringMatching(/^tgd_/) });
    const A1 = await childKey.request.begin({ sessionId, agent: "A1", ...pick(handed) });
    const A1sub = await childKey.request.begin({ sessionId, agent: "A1-helper", parentRequestId: A1.requestId });
    const B1 = await siblingKey.request.begin({ sessionId, agent: "B1", ...pick(await orchestrator.request.delegate({ requestId: O1.requestId })) });

    // The orchestrator asks for approval on its child's request and follows it.
    const asked = await orchestrator.approval.request({ requestId: A1.requestId, tool: "refund", args: { amount: 5 } });
    const stream = await orchestrator.approval.onDecision({ requestId: A1.requestId });
    await operator.approval.decide({ approvalId: asked.approvalId, action: "approve" });
    expect(await firstDecision(stream)).toMatchObject({ id: asked.approvalId, data: { status: "APPROVED" } });
    expect(await orchestrator.approval.await({ approvalId: asked.approvalId, timeoutMs: 0 })).toMatchObject({ status: "APPROVED" });
    expect(await orchestrator.request.trace({ requestId: A1.requestId, events: [{ type: "message", name: "routed" }] })).toEqual({ accepted: 1 });
    expect((await orchestrator.state.load({ taskId: A1.taskId })).taskId).toBe(A1.taskId);
    await orchestrator.thread.configure({ taskId: A1.taskId, config: { enabledTools: ["refund"] } });
    expect(await orchestrator.request.complete({ requestId: A1sub.requestId })).toMatchObject({ status: "COMPLETED" });
    // A follow-on in the child's task: the task is below the orchestrator's.
    const followOn = await orchestrator.request.begin({ sessionId, agent: "A1", taskId: A1.taskId, parentRequestId: O1.requestId });
    expect(followOn.taskId).toBe(A1.taskId);

    // The sibling: nothing of A1's.
    await expectRefusedLikeUnknown((id) => siblingKey.approval.await({ approvalId: id, timeoutMs: 0 }), asked.approvalId, UNKNOWN.apr);
    await expectRefusedLikeUnknown((id) => siblingKey.approval.reportExecution({ approvalId: id, executedArgs: { amount: 500 } }), asked.approvalId, UNKNOWN.apr);
    await expectRefusedLikeUnknown((id) => siblingKey.request.complete({ requestId: id }), A1.requestId, UNKNOWN.req);
    await expectRefusedLikeUnknown((id) => siblingKey.state.load({ taskId: id }), A1.taskId, UNKNOWN.tsk);
    await expectRefusedLikeUnknown((id) => siblingKey.request.begin({ sessionId, agent: "A1", taskId: id, parentRequestId: B1.requestId }), A1.taskId, UNKNOWN.tsk);
    // The child: nothing of the orchestrator's, nor of its sibling's.
    await expectRefusedLikeUnknown((id) => childKey.request.complete({ requestId: id }), O1.requestId, UNKNOWN.req);
    await expectRefusedLikeUnknown((id) => childKey.task.cancelAsAgent({ taskId: id }), O1.taskId, UNKNOWN.tsk);
    await expectRefusedLikeUnknown((id) => childKey.request.fail({ requestId: id, error: { message: "x" } }), B1.requestId, UNKNOWN.req);
    // The child's own work stays its own.
    await childKey.approval.reportExecution({ approvalId: asked.approvalId, executedArgs: { amount: 5 } });
    expect(await childKey.request.complete({ requestId: A1.requestId })).toMatchObject({ status: "COMPLETED" });
    // The orchestrator may cancel the whole tree below it, other keys' tasks included.
    expect(await orchestrator.task.cancelAsAgent({ taskId: O1.taskId })).toMatchObject({ status: "CANCELED" });
    expect((await db.prisma.task.findUniqueOrThrow({ where: { id: B1.taskId } })).status).toBe("CANCELED");
  });
});

describe("trust", () => {
  it("authority: a key trusted for \"A*\" acts on agent A2's request and task, not on O1's; taking the trust away takes effect at once", async () => {
    const owner = agentCaller(app.deps);
    const admin = await operatorCaller(app.deps);
    const { sessionId } = await owner.session.open({});
    const O1 = await owner.request.begin({ sessionId, agent: "O1", kind: "orchestrator" });
    const A2 = await owner.request.begin({ sessionId, agent: "A2", parentRequestId: O1.requestId });
    const { id: supervisorId, agent: supervisor } = await newAgentKey("supervisor");

    await expectRefusedLikeUnknown((id) => supervisor.request.trace({ requestId: id, events: [{ type: "message" }] }), A2.requestId, UNKNOWN.req);
    expect(await admin.agentKey.setTrust({ keyId: supervisorId, trustedAgents: ["A*"] })).toEqual({ id: supervisorId, trustedAgents: ["A*"] });

    expect(await supervisor.request.trace({ requestId: A2.requestId, events: [{ type: "message", name: "checked" }] })).toEqual({ accepted: 1 });
    const asked = await supervisor.approval.request({ requestId: A2.requestId, tool: "refund", args: {} });
    expect(await supervisor.approval.await({ approvalId: asked.approvalId, timeoutMs: 0 })).toMatchObject({ status: "PENDING" });
    expect((await supervisor.state.load({ taskId: A2.taskId })).taskId).toBe(A2.taskId);
    const followOn = await supervisor.request.begin({ sessionId, agent: "A2", taskId: A2.taskId });
    expect(followOn.taskId).toBe(A2.taskId);
    await expectRefusedLikeUnknown((id) => supervisor.request.complete({ requestId: id }), O1.requestId, UNKNOWN.req);
    await expectRefusedLikeUnknown((id) => supervisor.state.load({ taskId: id }), O1.taskId, UNKNOWN.tsk);

    expect(await admin.agentKey.setTrust({ keyId: supervisorId, trustedAgents: [] })).toEqual({ id: supervisorId, trustedAgents: [] });
    await expectRefusedLikeUnknown((id) => supervisor.request.trace({ requestId: id, events: [{ type: "message" }] }), A2.requestId, UNKNOWN.req);
    await expectRefusedLikeUnknown((id) => supervisor.approval.await({ approvalId: id, timeoutMs: 0 }), asked.approvalId, UNKNOWN.apr);
    // Though the node remembers the facts of the key's earlier ask on A2.
    await expectRefusedLikeUnknown((id) => supervisor.approval.request({ requestId: id, tool: "refund", args: {} }), A2.requestId, UNKNOWN.req);
    // Its own follow-on request stays its own.
    expect(await supervisor.request.complete({ requestId: followOn.requestId })).toMatchObject({ status: "COMPLETED" });

    const audited = await db.prisma.auditEntry.findMany({ where: { action: "agent_key.trust_changed" }, orderBy: { seq: "asc" } });
    expect(audited.map((entry) => entry.data)).toEqual([
      { name: "supervisor", from: [], to: ["A*"] },
      { name: "supervisor", from: ["A*"], to: [] },
    ]);
  });

  it("authority: rows from before ownership was recorded belong to no key; only a trusted key acts on them", async () => {
    const owner = agentCaller(app.deps);
    const admin = await operatorCaller(app.deps);
    const { sessionId } = await owner.session.open({});
    const legacy = await owner.request.begin({ sessionId, agent: "legacy-agent" });
    await db.prisma.request.update({ where: { id: legacy.requestId }, data: { agentKeyId: null } });
    await db.prisma.task.update({ where: { id: legacy.taskId }, data: { agentKeyId: null } });

    await expectRefusedLikeUnknown((id) => owner.request.complete({ requestId: id }), legacy.requestId, UNKNOWN.req);
    await expectRefusedLikeUnknown((id) => owner.state.load({ taskId: id }), legacy.taskId, UNKNOWN.tsk);
    const { id: keeperId, agent: keeper } = await newAgentKey("keeper");
    await admin.agentKey.setTrust({ keyId: keeperId, trustedAgents: ["legacy-*"] });
    expect((await keeper.state.load({ taskId: legacy.taskId })).taskId).toBe(legacy.taskId);
    expect(await keeper.request.complete({ requestId: legacy.requestId })).toMatchObject({ status: "COMPLETED" });
  });
});

describe("agent keys for admins", () => {
  it("agentKey.list: admins and operators see each key's name, prefix, dates and trust, never its hash or secret; viewers may not", async () => {
    const admin = await operatorCaller(app.deps);
    const { id } = await newAgentKey("supervisor");
    await admin.agentKey.setTrust({ keyId: id, trustedAgents: ["A*", "billing-*", "A*"] });
    await addPersonWith(app.deps, admin, { email: "ops@example.com", name: "Ops", role: "OPERATOR", password: "operator password" });
    await addPersonWith(app.deps, admin, { email: "viewer@example.com", name: "Viewer", role: "VIEWER", password: "viewer password" });
    const operator = await operatorCaller(app.deps, { email: "ops@example.com", password: "operator password" });
    const viewer = await operatorCaller(app.deps, { email: "viewer@example.com", password: "viewer password" });

    const { items } = await operator.agentKey.list();
    expect(items.map((item) => item.name)).toEqual(["bootstrap", "supervisor"]);
    const supervisor = items.find((item) => item.id === id)!;
    expect(supervisor).toEqual({
      id,
      name: "supervisor",
      keyPrefix: expect.stringMatching(/^tgk_/),
      createdAt: expect.any(String),
      lastUsedAt: null,
      revokedAt: null,
      trustedAgents: ["A*", "billing-*"],
    });
    const stored = await db.prisma.agentKey.findUniqueOrThrow({ where: { id } });
    expect(JSON.stringify(items)).not.toContain(stored.keyHash);
    expect(JSON.stringify(items)).not.toContain(stored.webhookSecret);
    await expect(viewer.agentKey.list()).rejects.toMatchObject({ code: "FORBIDDEN" });
  });

  it("agentKey.setTrust: admins only, each glob non-empty and at most 200 characters, at most 50 of them, for a key of the workspace", async () => {
    const admin = await operatorCaller(app.deps);
    const { id } = await newAgentKey("supervisor");
    await addPersonWith(app.deps, admin, { email: "ops@example.com", name: "Ops", role: "OPERATOR", password: "operator password" });
    const operator = await operatorCaller(app.deps, { email: "ops@example.com", password: "operator password" });

    await expect(operator.agentKey.setTrust({ keyId: id, trustedAgents: ["A*"] })).rejects.toMatchObject({ code: "FORBIDDEN" });
    for (const trustedAgents of [[""], ["  "], ["x".repeat(201)], Array.from({ length: 51 }, (_, i) => `agent-${i}`)]) {
      await expect(admin.agentKey.setTrust({ keyId: id, trustedAgents })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    }
    await expect(admin.agentKey.setTrust({ keyId: `key_${"0".repeat(22)}`, trustedAgents: [] })).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect((await db.prisma.agentKey.findUniqueOrThrow({ where: { id } })).trustedAgents).toEqual([]);
    expect(await db.prisma.auditEntry.count({ where: { action: "agent_key.trust_changed" } })).toBe(0);
    const fifty = Array.from({ length: 50 }, (_, i) => `agent-${i}`);
    expect((await admin.agentKey.setTrust({ keyId: id, trustedAgents: fifty })).trustedAgents).toEqual(fifty);
  });
});
