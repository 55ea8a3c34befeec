// Thread state through the router on a fresh database: config and the tool
// gate, versioned state with optimistic concurrency, ownership enforced
// server-side for every owner and writer, diffs, continuity and context.
import { applyPatch } from "fast-json-patch/index.mjs";
import { describe, expect, it } from "vitest";
import type { TollgateEvents } from "../server/events/bus.ts";
import { agentCaller, operatorCaller, useFreshApp, type TestApp, type TestDatabase } from "./harness.ts";

let db: TestDatabase;
let app: TestApp;
useFreshApp((created) => (db = created), (fresh) => (app = fresh));

const HOUR = 3600_000;
/** The router types state as zod's JSON type; test values are plain objects. */
const asState = (value: object) => value as Record<string, never>;

/** A session with one agent request (its own task), configured unless told otherwise. */
async function agentThread(options: { config?: Record<string, unknown> | null; ownership?: unknown; agent?: string } = {}) {
  const agent = agentCaller(app.deps);
  const { sessionId } = await agent.session.open({});
  const begun = await agent.request.begin({ sessionId, agent: options.agent ?? "researcher" });
  if (options.config !== null) {
    await agent.thread.configure({ taskId: begun.taskId, config: options.config ?? {}, ownership: options.ownership });
  }
  return { agent, ...begun };
}

const RULES = {
  rules: [
    { match: { key: "scratch" }, owner: "AGENT" },
    { match: { prefix: "mem." }, owner: "MEMORY" },
    { match: { key: "route" }, owner: "ORCHESTRATOR" },
    { match: { key: "cart" }, owner: "SHARED", protocol: "append-only" },
  ],
};

describe("thread config", () => {
  it("config: thread.configure replaces the config, and state.load returns it", async () => {
    const { agent, taskId } = await agentThread({ config: { enabledTools: ["search"], model: "small", temperature: 0 } });
    expect((await agent.state.load({ taskId })).config).toEqual({ enabledTools: ["search"], model: "small", temperature: 0 });
    expect(await agent.thread.configure({ taskId, config: { model: "large" } })).toEqual({ taskId });
    expect(await agent.state.load({ taskId })).toEqual({ taskId, version: 0, config: { model: "large" }, ownership: null, state: null });
  });

  it("config: ownership rules are kept when left out and cleared with null", async () => {
    const { agent, taskId } = await agentThread({ config: {}, ownership: RULES });
    await agent.thread.configure({ taskId, config: { a: 1 } });
    expect((await agent.state.load({ taskId })).ownership).toEqual(RULES);
    await agent.thread.configure({ taskId, config: { a: 1 }, ownership: null });
    expect((await agent.state.load({ taskId })).ownership).toBeNull();
  });

  it("config: bad configs and rules are 400s naming the field; nothing is stored", async () => {
    const { agent, taskId } = await agentThread({ config: null });
    await expect(agent.thread.configure({ taskId, config: { enabledTools: "search" } })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringContaining("config.enabledTools"),
    });
    await expect(agent.thread.configure({ taskId, config: {}, ownership: { rules: [{ match: { key: "cart" }, owner: "SHARED" }] } })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringContaining("ownership.rules[0]"),
    });
    await expect(agent.thread.configure({ taskId, config: [] as never })).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("config") });
    await expect(agent.thread.configure({ taskId: "tsk_missing0", config: {} })).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await db.prisma.threadConfig.count()).toBe(0);
  });

  it("config: the change is audited", async () => {
    const { taskId } = await agentThread({ config: { enabledTools: ["search"] }, ownership: RULES });
    const entry = await db.prisma.auditEntry.findFirst({ where: { action: "thread.configured", subjectId: taskId } });
    expect(entry?.data).toEqual({ config: { enabledTools: ["search"] }, ownership: RULES });
  });

  it("approval: approval.request for a tool outside enabledTools is refused naming thread and tool", async () => {
    const { agent, taskId, requestId } = await agentThread({ config: { enabledTools: ["search"] } });
    const refused = agent.approval.request({ requestId, tool: "send_email", args: { to: "x@example.com" } });
    await expect(refused).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(refused).rejects.toThrow(/"send_email".*thread of task tsk_/);
    await expect(refused).rejects.toThrow(new RegExp(taskId));
    expect(await db.prisma.approval.count()).toBe(0);
    expect((await db.prisma.request.findUniqueOrThrow({ where: { id: requestId } })).status).toBe("RUNNING");
    expect(await agent.approval.request({ requestId, tool: "search", args: { q: "x" } })).toMatchObject({ status: "PENDING" });
  });

  it("approval: a thread without enabledTools (or without config) restricts no tool", async () => {
    const configured = await agentThread({ config: { model: "small" } });
    expect(await configured.agent.approval.request({ requestId: configured.requestId, tool: "anything", args: {} })).toMatchObject({ status: "PENDING" });
    const bare = await agentThread({ config: null });
    expect(await bare.agent.approval.request({ requestId: bare.requestId, tool: "anything", args: {} })).toMatchObject({ status: "PENDING" });
  });
});

describe("state versions", () => {
  it("state: save without config is PRECONDITION_FAILED and stores nothing", async () => {
    const { agent, taskId, requestId } = await agentThread({ config: null });
    await expect(agent.state.save({ taskId, requestId, state: { a: 1 } })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringContaining("thread.configure"),
    });
    expect(await db.prisma.agentStateVersion.count()).toBe(0);
  });

  it("state: every version is kept with the request that saved it; history lists version, request, time and size", async () => {
    const { agent, sessionId, taskId, requestId } = await agentThread();
    const operator = await operatorCaller(app.deps);
    expect(await agent.state.save({ taskId, requestId, state: { notes: ["a"] } })).toMatchObject({ taskId, version: 1, unchanged: false });
    await agent.request.complete({ requestId });
    const second = await agent.request.begin({ sessionId, agent: "researcher", taskId });
    expect(await agent.state.save({ taskId, requestId: second.requestId, state: { notes: ["a", "b"] }, baseVersion: 1 })).toMatchObject({ version: 2 });
    expect(await agent.state.load({ taskId })).toMatchObject({ version: 2, state: { notes: ["a", "b"] } });
    const history = await operator.state.history({ taskId });
    expect(history.taskId).toBe(taskId);
    expect(history.versions.map((v) => [v.version, v.requestId, v.sizeBytes])).toEqual([
      [1, requestId, JSON.stringify({ notes: ["a"] }).length],
      [2, second.requestId, JSON.stringify({ notes: ["a", "b"] }).length],
    ]);
    expect(Date.parse(history.versions[0]!.createdAt)).not.toBeNaN();
    expect(await operator.state.get({ taskId, version: 1 })).toMatchObject({ version: 1, state: { notes: ["a"] }, owners: { notes: { owner: "SHARED" } } });
  });

  it("state: a stale baseVersion is CONFLICT naming the current version", async () => {
    const { agent, taskId, requestId } = await agentThread();
    await agent.state.save({ taskId, requestId, state: { n: 1 } });
    await agent.state.save({ taskId, requestId, state: { n: 2 }, baseVersion: 1 });
    const stale = agent.state.save({ taskId, requestId, state: { n: 3 }, baseVersion: 1 });
    await expect(stale).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringContaining("at version 2") });
    expect((await agent.state.load({ taskId })).state).toEqual({ n: 2 });
  });

  it("state: a retried save whose state already is the latest version answers unchanged, not CONFLICT", async () => {
    const { agent, taskId, requestId } = await agentThread();
    await agent.state.save({ taskId, requestId, state: { n: 1 }, baseVersion: 0 });
    expect(await agent.state.save({ taskId, requestId, state: { n: 1 }, baseVersion: 0 })).toMatchObject({ version: 1, unchanged: true });
    expect(await db.prisma.agentStateVersion.count({ where: { taskId } })).toBe(1);
  });

  it("state: two concurrent saves on the same base: exactly one wins, the other is CONFLICT", async () => {
    const { agent, taskId, requestId } = await agentThread();
    await agent.state.save({ taskId, requestId, state: { n: 0 } });
    const results = await Promise.allSettled([1, 2, 3].map((n) => agent.state.save({ taskId, requestId, state: { n }, baseVersion: 1 })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(results.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(["CONFLICT", "CONFLICT"]);
    expect(await db.prisma.agentStateVersion.count({ where: { taskId } })).toBe(2);
  });

  it("state: concurrent saves without baseVersion all land, each as its own version", async () => {
    const { agent, taskId, requestId } = await agentThread();
    const results = await Promise.all([1, 2, 3, 4, 5].map((n) => agent.state.save({ taskId, requestId, state: { n } })));
    expect(results.map((result) => result.version).sort()).toEqual([1, 2, 3, 4, 5]);
    expect((await agent.state.load({ taskId })).version).toBe(5);
  });

  it("state: saving the state unchanged stores no new version", async () => {
    const { agent, taskId, requestId } = await agentThread();
    await agent.state.save({ taskId, requestId, state: { a: { b: 1, c: 2 } } });
    expect(await agent.state.save({ taskId, requestId, state: { a: { c: 2, b: 1 } }, baseVersion: 1 })).toMatchObject({ version: 1, unchanged: true });
    expect(await db.prisma.agentStateVersion.count({ where: { taskId } })).toBe(1);
  });

  it("state: state:saved is published after the commit; the version row, not the audit log, records the save", async () => {
    const { agent, taskId, requestId, sessionId } = await agentThread();
    const seen: TollgateEvents["state:saved"][] = [];
    app.bus.on("state:saved", (event) => seen.push(event));
    await agent.state.save({ taskId, requestId, state: { a: 1 } });
    expect(seen).toEqual([{ workspaceId: app.workspaceId, sessionId, taskId, version: 1 }]);
    expect(await db.prisma.agentStateVersion.findFirst({ where: { taskId }, select: { version: true, requestId: true, sizeBytes: true } })).toEqual({
      version: 1,
      requestId,
      sizeBytes: 7,
    });
    expect(await db.prisma.auditEntry.count({ where: { subjectId: taskId, action: { startsWith: "state." } } })).toBe(0);
  });

  it("state: a request that ended cannot save, nor a request of an unrelated task", async () => {
    const { agent, sessionId, taskId, requestId } = await agentThread();
    const other = await agent.request.begin({ sessionId, agent: "other" });
    await expect(agent.state.save({ taskId, requestId: other.requestId, state: { a: 1 } })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringContaining(`belongs to task ${other.taskId}`),
    });
    await agent.request.complete({ requestId });
    await expect(agent.state.save({ taskId, requestId, state: { a: 1 } })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringContaining("already ended as COMPLETED"),
    });
    expect(await db.prisma.agentStateVersion.count()).toBe(0);
  });

  it("state: bad input is a 400 naming the field, never a 500", async () => {
    const { agent, taskId, requestId } = await agentThread();
    const cases: [unknown, string][] = [
      [{ taskId, requestId, state: [1, 2] }, "state"],
      [{ taskId, requestId, state: "text" }, "state"],
      [{ taskId, requestId, state: {}, baseVersion: -1 }, "baseVersion"],
      [{ taskId, requestId, state: {}, baseVersion: 1.5 }, "baseVersion"],
      [{ taskId: "nope", requestId, state: {} }, "taskId"],
      [{ taskId, state: {} }, "requestId"],
    ];
    for (const [input, field] of cases) {
      await expect(agent.state.save(input as never)).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining(field) });
    }
    await expect(agent.state.save({ taskId, requestId: "req_missing0", state: {} })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(agent.state.load({ taskId: "tsk_missing0" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("state: a state over the size limit is PAYLOAD_TOO_LARGE or a 400, and nothing is stored", async () => {
    const { agent, taskId, requestId } = await agentThread();
    const huge = { blob: "x".repeat(2 * 1024 * 1024 + 10) };
    await expect(agent.state.save({ taskId, requestId, state: huge })).rejects.toMatchObject({ message: expect.stringContaining("state") });
    expect(await db.prisma.agentStateVersion.count()).toBe(0);
  });
});

describe("ownership", () => {
  /** A thread with RULES, its orchestrator above it, and version 1 holding one key per owner. */
  async function ownedThread() {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const orchestrator = await agent.request.begin({ sessionId, agent: "O1", kind: "orchestrator" });
    const worker = await agent.request.begin({ sessionId, agent: "A1", parentRequestId: orchestrator.requestId });
    await agent.thread.configure({ taskId: worker.taskId, config: {}, ownership: RULES });
    await agent.state.save({ taskId: worker.taskId, requestId: orchestrator.requestId, state: { route: "billing", cart: [] } });
    await agent.state.remember({ taskId: worker.taskId, requestId: worker.requestId, memory: { "mem.name": "Ada" } });
    return { agent, sessionId, orchestrator, worker, taskId: worker.taskId };
  }

  const KEY_OF = { AGENT: "scratch", MEMORY: "mem.name", ORCHESTRATOR: "route", SHARED: "cart" } as const;
  type Owner = keyof typeof KEY_OF;
  type WriterKind = "agent" | "orchestrator" | "memory";
  const ALLOWED: Record<WriterKind, Owner[]> = { agent: ["SHARED"], orchestrator: ["ORCHESTRATOR", "SHARED"], memory: ["MEMORY"] };
  const pairs = (["agent", "orchestrator", "memory"] as const).flatMap((writer) =>
    (["AGENT", "MEMORY", "ORCHESTRATOR", "SHARED"] as const).map((owner) => [writer, owner, ALLOWED[writer].includes(owner)] as const),
  );

  it.each(pairs)("ownership: writer %s on a %s key: allowed %s (server-side)", async (writer, owner, allowed) => {
    const { agent, taskId, orchestrator, worker } = await ownedThread();
    const key = KEY_OF[owner];
    const value = owner === "SHARED" ? ["item"] : `new ${owner}`;
    const before = await agent.state.load({ taskId });
    const write =
      writer === "memory"
        ? agent.state.remember({ taskId, requestId: worker.requestId, memory: { [key]: value } })
        : agent.state.save({ taskId, requestId: (writer === "orchestrator" ? orchestrator : worker).requestId, state: asState({ ...before.state, [key]: value }) });
    if (allowed) {
      expect(await write).toMatchObject({ version: before.version + 1 });
      expect((await agent.state.load({ taskId })).state?.[key]).toEqual(value);
      return;
    }
    await expect(write).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(write).rejects.toThrow(`key "${key}" is owned by ${owner}`);
    const writerName = { agent: "an agent", orchestrator: "an orchestrator", memory: "the memory API" }[writer];
    await expect(write).rejects.toThrow(writer === "memory" ? "memory API" : writerName);
    expect(await agent.state.load({ taskId })).toEqual(before);
  });

  it("ownership: an agent's save that drops a MEMORY key is refused; the memory API removes it with null", async () => {
    const { agent, taskId, worker } = await ownedThread();
    await expect(agent.state.save({ taskId, requestId: worker.requestId, state: { route: "billing", cart: [] } })).rejects.toMatchObject({
      code: "FORBIDDEN",
      message: expect.stringContaining('"mem.name" is owned by MEMORY'),
    });
    expect(await agent.state.remember({ taskId, requestId: worker.requestId, memory: { "mem.name": null } })).toMatchObject({ version: 3 });
    expect((await agent.state.load({ taskId })).state).toEqual({ route: "billing", cart: [] });
  });

  it("ownership: the refusal carries the key, its owner and the writer in error data", async () => {
    const { agent, taskId, worker } = await ownedThread();
    const error = (await agent.state
      .save({ taskId, requestId: worker.requestId, state: { route: "sales", cart: [], "mem.name": "Ada" } })
      .catch((caught: unknown) => caught)) as { cause?: { details?: unknown } };
    expect(error.cause?.details).toMatchObject({ key: "route", owner: "ORCHESTRATOR", writer: "agent", change: "changed" });
  });

  it("ownership: the console's diff shows each key's owner and SHARED protocol", async () => {
    const { agent, taskId, orchestrator } = await ownedThread();
    const operator = await operatorCaller(app.deps);
    await agent.state.save({ taskId, requestId: orchestrator.requestId, state: { route: "sales", cart: ["x"], "mem.name": "Ada" } });
    const diff = await operator.state.diff({ taskId, fromVersion: 0, toVersion: 3 });
    expect(diff.keys).toEqual([
      { key: "cart", change: "added", owner: "SHARED", protocol: "append-only" },
      { key: "mem.name", change: "added", owner: "MEMORY" },
      { key: "route", change: "added", owner: "ORCHESTRATOR" },
    ]);
  });
});

describe("diffs", () => {
  it("diff: nested arrays produce RFC 6902 operations that turn one version into the other", async () => {
    const { agent, taskId, requestId } = await agentThread();
    const operator = await operatorCaller(app.deps);
    const v1 = { items: [{ id: 1, tags: ["a", "b"] }, { id: 2, tags: [] }, { id: 3 }], meta: { pages: [[1, 2], [3]] } };
    const v2 = { items: [{ id: 1, tags: ["a", "c", "d"] }, { id: 3, extra: true }], meta: { pages: [[1], [3, 4], []] } };
    await agent.state.save({ taskId, requestId, state: asState(v1) });
    await agent.state.save({ taskId, requestId, state: asState(v2) });
    const diff = await operator.state.diff({ taskId, fromVersion: 1, toVersion: 2 });
    expect(diff).toMatchObject({ taskId, fromVersion: 1, toVersion: 2 });
    expect(diff.operations.length).toBeGreaterThan(0);
    expect(diff.operations.every((op) => op.path.startsWith("/items/") || op.path.startsWith("/meta/"))).toBe(true);
    expect(applyPatch(structuredClone(v1), diff.operations as never, true, false).newDocument).toEqual(v2);
    expect(diff.keys).toEqual([
      { key: "items", change: "changed", owner: "SHARED", protocol: "last-write-wins" },
      { key: "meta", change: "changed", owner: "SHARED", protocol: "last-write-wins" },
    ]);
    const back = await operator.state.diff({ taskId, fromVersion: 2, toVersion: 1 });
    expect(applyPatch(structuredClone(v2), back.operations as never, true, false).newDocument).toEqual(v1);
  });

  it("diff: version 0 is the empty thread; a missing version is NOT_FOUND naming the range", async () => {
    const { agent, taskId, requestId } = await agentThread();
    const operator = await operatorCaller(app.deps);
    await agent.state.save({ taskId, requestId, state: { a: 1 } });
    expect(await operator.state.diff({ taskId, fromVersion: 0, toVersion: 1 })).toMatchObject({
      operations: [{ op: "add", path: "/a", value: 1 }],
      keys: [{ key: "a", change: "added" }],
    });
    await expect(operator.state.diff({ taskId, fromVersion: 1, toVersion: 5 })).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: expect.stringContaining("versions run from 1 to 1"),
    });
    await expect(operator.state.diff({ taskId, fromVersion: -1, toVersion: 1 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });

  it("diff: agents cannot read history or diffs; operators must be logged in", async () => {
    const { agent, taskId } = await agentThread();
    await expect((agent.state as never as { history: (i: unknown) => Promise<unknown> }).history({ taskId })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });
});

describe("continuity", () => {
  const call = (n: number) => ({ callId: `call_${n}`, tool: n % 2 ? "search" : "fetch", args: { n }, result: { ok: n } });

  it("continuity: restore strategy hands back earlier tool calls and prunes", async () => {
    const { agent, sessionId, taskId, requestId: R1 } = await agentThread({ config: { keepToolCalls: 3 } });
    expect(await agent.continuity.load({ taskId, requestId: R1 })).toMatchObject({ strategy: null, toolCalls: [], version: 0, sizeBytes: 0 });
    const first = await agent.continuity.record({ strategy: "restore", taskId, requestId: R1, toolCalls: [call(1), call(2)] });
    expect(first).toMatchObject({ strategy: "restore", version: 1, pruned: 0 });
    expect(first.sizeBytes).toBeGreaterThan(0);
    await agent.request.complete({ requestId: R1 });

    const R2 = (await agent.request.begin({ sessionId, agent: "researcher", taskId })).requestId;
    const handedBack = await agent.continuity.load({ taskId, requestId: R2 });
    expect(handedBack.toolCalls.map((c) => [c.requestId, c.callId, c.tool, c.args, c.result])).toEqual([
      [R1, "call_1", "search", { n: 1 }, { ok: 1 }],
      [R1, "call_2", "fetch", { n: 2 }, { ok: 2 }],
    ]);
    const second = await agent.continuity.record({ strategy: "restore", taskId, requestId: R2, toolCalls: [call(3), call(4)] });
    expect(second).toMatchObject({ version: 2, pruned: 1 });
    expect(second.toolCalls.map((c) => c.callId)).toEqual(["call_2", "call_3", "call_4"]);
    await agent.request.complete({ requestId: R2 });

    const R3 = (await agent.request.begin({ sessionId, agent: "researcher", taskId })).requestId;
    const third = await agent.continuity.load({ taskId, requestId: R3 });
    expect(third.toolCalls.map((c) => `${c.requestId === R1 ? "R1" : "R2"}/${c.callId}`)).toEqual(["R1/call_2", "R2/call_3", "R2/call_4"]);
    expect(third.sizeBytes).toBe(JSON.stringify(third.toolCalls).length);
    // keepLast on the call overrides the config.
    const kept = await agent.continuity.record({ strategy: "restore", taskId, requestId: R3, toolCalls: [call(5)], keepLast: 1 });
    expect(kept).toMatchObject({ pruned: 3 });
    expect(kept.toolCalls.map((c) => c.callId)).toEqual(["call_5"]);
  });

  it("continuity: a tool call reported twice is stored once", async () => {
    const { agent, taskId, requestId } = await agentThread();
    await agent.continuity.record({ strategy: "restore", taskId, requestId, toolCalls: [{ callId: "c1", tool: "search" }] });
    const again = await agent.continuity.record({ strategy: "restore", taskId, requestId, toolCalls: [{ ...call(1), callId: "c1" }] });
    expect(again.toolCalls).toHaveLength(1);
    expect(again.toolCalls[0]).toMatchObject({ callId: "c1", result: { ok: 1 } });
  });

  it("continuity: reference strategy reuses the id across three requests", async () => {
    const { agent, sessionId, taskId, requestId: R1 } = await agentThread({ agent: "planner" });
    const first = await agent.continuity.record({ strategy: "reference", taskId, requestId: R1 });
    expect(first).toMatchObject({ strategy: "reference", created: true, version: 1 });
    expect(first.conversationId).toMatch(/^cnv_/);
    await agent.request.complete({ requestId: R1 });
    const ids = [first.conversationId];
    for (let i = 0; i < 2; i++) {
      const { requestId } = await agent.request.begin({ sessionId, agent: "planner", taskId });
      expect(await agent.continuity.load({ taskId, requestId })).toMatchObject({ strategy: "reference", conversationId: first.conversationId });
      const again = await agent.continuity.record({ strategy: "reference", taskId, requestId });
      expect(again).toMatchObject({ created: false, version: 1 });
      ids.push(again.conversationId);
      await agent.request.complete({ requestId });
    }
    expect(new Set(ids).size).toBe(1);
  });

  it("continuity: reference keeps the agent's own id; a different one later is CONFLICT", async () => {
    const { agent, taskId, requestId } = await agentThread();
    expect(await agent.continuity.record({ strategy: "reference", taskId, requestId, conversationId: "thread_abc" })).toMatchObject({
      conversationId: "thread_abc",
      created: true,
    });
    await expect(agent.continuity.record({ strategy: "reference", taskId, requestId, conversationId: "thread_xyz" })).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("thread_abc"),
    });
  });

  it("continuity: two agents in one session never see each other's continuity state", async () => {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const a = await agent.request.begin({ sessionId, agent: "stateless-a" });
    const b = await agent.request.begin({ sessionId, agent: "stateful-b" });
    await agent.continuity.record({ strategy: "restore", taskId: a.taskId, requestId: a.requestId, toolCalls: [call(1)] });
    const bRef = await agent.continuity.record({ strategy: "reference", taskId: b.taskId, requestId: b.requestId });
    expect(await agent.continuity.load({ taskId: b.taskId, requestId: b.requestId })).toMatchObject({
      agent: "stateful-b",
      toolCalls: [],
      conversationId: bRef.conversationId,
    });
    expect(await agent.continuity.load({ taskId: a.taskId, requestId: a.requestId })).toMatchObject({ agent: "stateless-a", conversationId: null });
    await expect(agent.continuity.load({ taskId: a.taskId, requestId: b.requestId })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(agent.continuity.record({ strategy: "restore", taskId: a.taskId, requestId: b.requestId, toolCalls: [] })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
  });

  it("continuity: bad tool calls are 400s naming the field", async () => {
    const { agent, taskId, requestId } = await agentThread();
    await expect(agent.continuity.record({ strategy: "restore", taskId, requestId, toolCalls: [{ callId: "", tool: "x" }] })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringMatching(/"toolCalls",\s*0,\s*"callId"/),
    });
    await expect(
      agent.continuity.record({ strategy: "restore", taskId, requestId, toolCalls: [{ callId: "c", tool: "x", at: "yesterday" }] }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringMatching(/"toolCalls",\s*0,\s*"at"/) });
    await expect(agent.continuity.record({ strategy: "sometimes", taskId, requestId } as never)).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });
});

describe("context", () => {
  it("context: explicit state expiry clears entities idle past the window; lookups still find them", async () => {
    const { agent, taskId, requestId } = await agentThread();
    const start = new Date("2026-03-01T08:00:00.000Z");
    app.deps.now = () => start;
    await agent.context.touch({ taskId, requestId, entities: [{ id: "acme", name: "Acme Corp", type: "company", data: { tier: "gold" } }] });
    app.deps.now = () => new Date(start.getTime() + 6 * HOUR);
    await agent.context.touch({ taskId, requestId, entities: [{ id: "globex", name: "Globex Corporation" }] });

    app.deps.now = () => new Date(start.getTime() + 7.5 * HOUR);
    const context = await agent.context.assemble({ taskId, lookups: ["acmee"] });
    expect(context.explicit.entities.map((e) => e.id)).toEqual(["globex"]);
    expect(context.expired).toEqual(["acme"]);
    expect(context.lookups).toEqual([{ query: "acmee", matches: [expect.objectContaining({ id: "acme", name: "Acme Corp", type: "company" })] }]);
    const { sizeBytes, taskId: _taskId, ...rest } = context;
    expect(sizeBytes).toBe(Buffer.byteLength(JSON.stringify(rest)));
    expect((await db.prisma.threadEntity.findUniqueOrThrow({ where: { taskId_entityId: { taskId, entityId: "acme" } } })).clearedAt).not.toBeNull();

    // Cleared, not reported again; touching it again revives it.
    expect((await agent.context.assemble({ taskId })).expired).toEqual([]);
    await agent.context.touch({ taskId, requestId, entities: [{ id: "acme", name: "Acme Corp" }] });
    expect((await agent.context.assemble({ taskId })).explicit.entities.map((e) => e.id)).toEqual(["acme", "globex"]);
  });

  it("context: the inactivity window comes from the call, else the thread config", async () => {
    const { agent, taskId, requestId } = await agentThread({ config: { inactivityWindowMs: HOUR } });
    const start = new Date("2026-03-01T08:00:00.000Z");
    app.deps.now = () => start;
    await agent.context.touch({ taskId, requestId, entities: [{ id: "e1", name: "One" }] });
    app.deps.now = () => new Date(start.getTime() + 2 * HOUR);
    expect((await agent.context.assemble({ taskId, inactivityWindowMs: 3 * HOUR })).explicit.entities).toHaveLength(1);
    expect((await agent.context.assemble({ taskId })).expired).toEqual(["e1"]);
  });

  it("context: trimming to the last 3 tool turns, in compact id-and-name form", async () => {
    const { agent, sessionId, taskId, requestId: first } = await agentThread();
    const requests = [first];
    await agent.request.complete({ requestId: first });
    for (let i = 1; i < 6; i++) {
      const { requestId } = await agent.request.begin({ sessionId, agent: "researcher", taskId });
      requests.push(requestId);
      await agent.request.complete({ requestId });
    }
    // Requests 0..4 called tools; request 5 only talked.
    for (const [index, requestId] of requests.entries()) {
      const events =
        index === 5
          ? [{ type: "message", data: { text: "no tools" } }]
          : [
              { type: "tool_call", name: "search", data: { callId: `c${index}a`, args: { q: "x".repeat(200) } } },
              { type: "tool_result", name: "search", data: { callId: `c${index}a`, result: "y".repeat(500) } },
              { type: "tool_call", name: "fetch", data: { callId: `c${index}b` } },
            ];
      await db.prisma.traceEvent.createMany({
        data: events.map((event) => ({ workspaceId: app.workspaceId, sessionId, taskId, requestId, category: "EXECUTION" as const, ...event })),
      });
    }
    const context = await agent.context.assemble({ taskId });
    expect(context.recentToolOutputs).toEqual(
      [2, 3, 4].map((index) => ({
        requestId: requests[index],
        calls: [
          { id: `c${index}a`, name: "search" },
          { id: `c${index}b`, name: "fetch" },
        ],
      })),
    );
    expect(JSON.stringify(context)).not.toContain("yyyy");
    expect((await agent.context.assemble({ taskId, recentTurns: 1 })).recentToolOutputs.map((t) => t.requestId)).toEqual([requests[4]]);
  });

  it("context: an approved and executed tool counts as a tool call of its turn", async () => {
    const { agent, taskId, requestId } = await agentThread();
    const operator = await operatorCaller(app.deps);
    const asked = await agent.approval.request({ requestId, tool: "send_email", args: {} });
    await operator.approval.decide({ approvalId: asked.approvalId, action: "approve" });
    await agent.approval.reportExecution({ approvalId: asked.approvalId, executedArgs: {} });
    expect((await agent.context.assemble({ taskId })).recentToolOutputs).toEqual([{ requestId, calls: [{ id: asked.approvalId, name: "send_email" }] }]);
  });

  it("context: bad input is a 400 naming the field", async () => {
    const { agent, taskId, requestId } = await agentThread();
    await expect(agent.context.assemble({ taskId, lookups: [" "] })).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("lookups") });
    await expect(agent.context.assemble({ taskId, recentTurns: -1 })).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("recentTurns") });
    await expect(
      agent.context.touch({ taskId, requestId, entities: [{ id: "a", name: "A" }, { id: "a", name: "B" }] }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("entities[1]") });
    await expect(agent.context.assemble({ taskId: "tsk_missing0" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("state at an ask", () => {
  it("agent state: the review screen gets the version saved when the agent asked, owner-annotated, and its change since the task's previous ask", async () => {
    let clock = Date.parse("2026-11-27T10:00:00Z");
    app.deps.now = () => new Date(clock);
    const tick = () => (clock += 1000);
    const { agent, taskId, requestId } = await agentThread({ ownership: RULES });
    const operator = await operatorCaller(app.deps);
    tick();
    const first = await agent.approval.request({ requestId, tool: "lookup", args: {} });
    tick();
    await agent.state.save({ taskId, requestId, state: asState({ ticket: "purge drafts only", cart: ["a"] }) });
    tick();
    const second = await agent.approval.request({ requestId, tool: "run_sql", args: { query: "DELETE FROM documents" } });
    tick();
    await agent.state.save({ taskId, requestId, state: asState({ ticket: "purge drafts only", done: true, cart: ["a", "b"] }), baseVersion: 1 });

    expect(await operator.approval.agentState({ approvalId: first.approvalId })).toEqual({ taskId, atAsk: null, newerVersions: 2, previous: null, change: null });
    expect(await operator.approval.agentState({ approvalId: second.approvalId })).toEqual({
      taskId,
      atAsk: {
        version: 1,
        savedAt: new Date(Date.parse("2026-11-27T10:00:02Z")).toISOString(),
        sizeBytes: expect.any(Number),
        state: { ticket: "purge drafts only", cart: ["a"] },
        owners: { ticket: { owner: "SHARED", protocol: "last-write-wins" }, cart: { owner: "SHARED", protocol: "append-only" } },
      },
      newerVersions: 1,
      previous: { approvalId: first.approvalId, tool: "lookup", askedAt: new Date(Date.parse("2026-11-27T10:00:01Z")).toISOString(), version: 0 },
      change: {
        fromVersion: 0,
        toVersion: 1,
        keys: [
          { key: "cart", change: "added", owner: "SHARED", protocol: "append-only" },
          { key: "ticket", change: "added", owner: "SHARED", protocol: "last-write-wins" },
        ],
      },
    });
    await expect(operator.approval.agentState({ approvalId: "apr_nosuch" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
