// Thread state over real HTTP through the SDK's thread handle: implicit and
// explicit saving, the end-of-request hook, config lookups, continuity and
// context; plus the wire format of thread-state errors.
import { describe, expect, it } from "vitest";
import { createTollgate, type ThreadLog } from "../sdk/src/index.ts";
import { agentSdk, type OperatorClient } from "./clients.ts";
import { AGENT_KEY } from "./harness.ts";
import { useTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let operator: OperatorClient;
useTestServer((started, loggedIn) => {
  test = started;
  operator = loggedIn;
});

function memoryLog() {
  const lines: { level: "info" | "warn"; message: string }[] = [];
  const log: ThreadLog = { info: (message) => lines.push({ level: "info", message }), warn: (message) => lines.push({ level: "warn", message }) };
  return { log, lines };
}

/** A new task for `agent` with a configured thread; returns the SDK and the first request's handle. */
async function configuredTask(agent: string, config: Record<string, unknown> = {}) {
  const sdk = agentSdk(test.url);
  const { sessionId } = await sdk.openSession({});
  const first = await sdk.begin({ sessionId, agent });
  await sdk.call("thread.configure", { taskId: first.taskId, config });
  const next = () => sdk.begin({ sessionId, agent, taskId: first.taskId });
  return { sdk, first, next };
}

const versions = async (taskId: string) => (await operator.state.history.query({ taskId })).versions;

describe("sdk: implicit saving", () => {
  it("sdk implicit: a mutation is saved at request end, with the request that made it", async () => {
    const { first } = await configuredTask("notes-agent");
    const thread = first.thread({ saving: "implicit" });
    const state = await thread.load();
    state.notes = ["met Ada"];
    (state.nested ??= { list: [] as number[] }) as { list: number[] };
    (state.nested as { list: number[] }).list.push(1);
    expect(await versions(first.taskId)).toEqual([]);
    await first.complete({ ok: true });
    const saved = await versions(first.taskId);
    expect(saved.map((v) => [v.version, v.requestId])).toEqual([[1, first.requestId]]);
    expect((await first.thread().load())).toEqual({ notes: ["met Ada"], nested: { list: [1] } });
  });

  it("sdk implicit: no save without mutation (AGENT scratch keys do not count and are never persisted)", async () => {
    const { first, next } = await configuredTask("idle-agent");
    await first.thread({ saving: "explicit" }).save({ kept: 1 });
    await first.complete();
    const second = await next();
    const thread = second.thread({ saving: "implicit" });
    const state = await thread.load();
    state._scratch = "request-scoped";
    expect(await thread.end()).toEqual({ saved: false, version: 1, reason: "unchanged" });
    await second.complete();
    expect(await versions(first.taskId)).toHaveLength(1);
    const third = await next();
    const changed = third.thread({ saving: "implicit" });
    (await changed.load())._draft = "x";
    (changed.state as Record<string, unknown>).kept = 2;
    expect(await changed.end()).toEqual({ saved: true, version: 2 });
    expect(await third.thread().load()).toEqual({ kept: 2 });
  });

  it("sdk implicit: an explicit save in between is not repeated at the end", async () => {
    const { first } = await configuredTask("saver");
    const thread = first.thread({ saving: "implicit" });
    const state = await thread.load();
    state.step = 1;
    expect(await thread.save()).toEqual({ version: 1, unchanged: false });
    expect(await thread.end()).toEqual({ saved: false, version: 1, reason: "unchanged" });
    await first.complete();
    expect(await versions(first.taskId)).toHaveLength(1);
  });

  it("sdk implicit: a change after an explicit save is saved once at the end", async () => {
    const { first } = await configuredTask("saver-2");
    const thread = first.thread({ saving: "implicit" });
    const state = await thread.load();
    state.step = 1;
    await thread.save();
    state.step = 2;
    await first.complete();
    expect((await versions(first.taskId)).map((v) => v.version)).toEqual([1, 2]);
    expect(await first.thread().load()).toEqual({ step: 2 });
  });

  it("sdk implicit: a state set to null is not saved and produces a warning", async () => {
    const { first } = await configuredTask("nuller");
    const { log, lines } = memoryLog();
    const thread = first.thread({ saving: "implicit", log });
    await thread.load();
    thread.state = null;
    await first.complete();
    expect(await versions(first.taskId)).toEqual([]);
    expect(lines).toEqual([{ level: "warn", message: expect.stringMatching(/state was set to null.*not saved/) }]);
  });

  it("sdk implicit: a save based on a stale version surfaces CONFLICT naming the current version", async () => {
    const { sdk, first } = await configuredTask("racer");
    const thread = first.thread({ saving: "implicit" });
    (await thread.load()).mine = true;
    await sdk.call("state.save", { taskId: first.taskId, requestId: first.requestId, state: { theirs: true } });
    await expect(thread.end()).rejects.toMatchObject({ data: { code: "CONFLICT", httpStatus: 409 }, message: expect.stringContaining("at version 1") });
  });
});

describe("sdk: explicit saving", () => {
  it("sdk explicit: only save() persists; the end hook saves nothing and says so once in the log", async () => {
    const { first, next } = await configuredTask("explicit-agent");
    const { log, lines } = memoryLog();
    const thread = first.thread({ log });
    (await thread.load()).unsaved = true;
    await first.complete();
    const second = await next();
    const again = second.thread({ log });
    (await again.load()).saved = true;
    await again.save();
    await second.complete();
    expect((await versions(first.taskId)).map((v) => v.requestId)).toEqual([second.requestId]);
    expect(await second.thread().load()).toEqual({ saved: true });
    expect(lines).toEqual([{ level: "info", message: expect.stringContaining("saving is explicit") }]);
  });

  it("sdk: remember writes MEMORY keys and the handle's cache follows, so the end hook does not re-save", async () => {
    const { first } = await configuredTask("memo");
    const thread = first.thread({ saving: "implicit" });
    await thread.configure({}, { rules: [{ match: { prefix: "mem." }, owner: "MEMORY" }] });
    (await thread.load()).topic = "billing";
    await thread.save();
    await thread.remember({ "mem.customer": "Ada" });
    expect(thread.state).toEqual({ topic: "billing", "mem.customer": "Ada" });
    expect(await thread.end()).toMatchObject({ saved: false, reason: "unchanged" });
    expect((await versions(first.taskId)).map((v) => v.version)).toEqual([1, 2]);
    thread.state!["mem.customer"] = "Eve";
    const refused = first.thread({ saving: "implicit" });
    await refused.load();
    refused.state!["mem.customer"] = "Eve";
    await expect(refused.end()).rejects.toMatchObject({ data: { code: "FORBIDDEN" }, message: expect.stringContaining('"mem.customer" is owned by MEMORY') });
  });
});

describe("sdk: config", () => {
  it("sdk: isToolEnabled and getConfigValue read the thread's config; configure replaces it", async () => {
    const { first } = await configuredTask("tooling", { enabledTools: ["search"], model: "small" });
    const thread = first.thread();
    expect(thread.isToolEnabled("search")).toBe(false);
    await thread.load();
    expect(thread.isToolEnabled("search")).toBe(true);
    expect(thread.isToolEnabled("send_email")).toBe(false);
    expect(thread.getConfigValue("model")).toBe("small");
    expect(thread.getConfigValue("missing")).toBeUndefined();
    await thread.configure({ enabledTools: ["send_email"] });
    expect(thread.isToolEnabled("search")).toBe(false);
    expect(thread.getConfigValue("model")).toBeUndefined();
    const fresh = first.thread();
    await fresh.load();
    expect(fresh.config).toEqual({ enabledTools: ["send_email"] });
    // The gate refuses a tool the new config does not enable.
    await expect(first.gate("search", {}, () => "ran")).rejects.toMatchObject({ data: { code: "FORBIDDEN", httpStatus: 403 }, message: expect.stringContaining('"search"') });
  });
});

describe("sdk: continuity", () => {
  it("sdk restore: earlier requests' tool calls are handed back to the next request, pruned to the last N", async () => {
    const { first, next } = await configuredTask("stateless", { keepToolCalls: 3 });
    const thread = first.thread({ continuity: "restore" });
    expect((await thread.start()).toolCalls).toEqual([]);
    for (const q of ["a", "b"]) await thread.recordToolCall({ tool: "search", args: { q }, result: { hits: q.length } });
    await first.complete();
    const second = await next();
    const resumed = second.thread({ continuity: "restore" });
    const started = await resumed.start();
    expect(started.toolCalls.map((call) => [call.requestId, call.tool, call.args])).toEqual([
      [first.requestId, "search", { q: "a" }],
      [first.requestId, "search", { q: "b" }],
    ]);
    await resumed.recordToolCall({ tool: "fetch", args: { url: "x" } });
    await resumed.recordToolCall({ tool: "fetch", args: { url: "y" } });
    await second.complete();
    const third = await next();
    const last = await third.thread({ continuity: "restore" }).restore();
    expect(last.map((call) => (call.args as { q?: string; url?: string }).q ?? (call.args as { url: string }).url)).toEqual(["b", "x", "y"]);
  });

  it("sdk reference: the conversation id is created on the first request and reused on the next two", async () => {
    const { first, next } = await configuredTask("stateful");
    const ids = [(await first.thread({ continuity: "reference" }).start()).conversationId];
    await first.complete();
    for (let i = 0; i < 2; i++) {
      const request = await next();
      ids.push((await request.thread({ continuity: "reference" }).start()).conversationId);
      await request.complete();
    }
    expect(ids[0]).toMatch(/^cnv_/);
    expect(ids).toEqual([ids[0], ids[0], ids[0]]);
  });

  it("sdk: two agents in one session never see each other's continuity", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({});
    const a = await sdk.begin({ sessionId, agent: "agent-a" });
    const b = await sdk.begin({ sessionId, agent: "agent-b" });
    await a.thread({ continuity: "restore" }).recordToolCall({ tool: "secret_tool", args: { token: "a-only" } });
    expect(await b.thread({ continuity: "restore" }).restore()).toEqual([]);
    await expect(sdk.thread(a.taskId, b.requestId, { continuity: "restore" }).restore()).rejects.toMatchObject({ data: { code: "FORBIDDEN" } });
  });
});

describe("sdk: context", () => {
  it("sdk: context() assembles entities, recent tool turns and lookups, with the size in bytes", async () => {
    const { first, next } = await configuredTask("contextual");
    const thread = first.thread();
    await thread.touch([{ id: "acme", name: "Acme Corp", type: "company" }]);
    await thread.recordToolCall({ tool: "crm_lookup", args: { name: "Acme" }, callId: "c1" });
    await first.complete();
    const second = await next();
    const context = await second.thread().context({ lookups: ["acmee"] });
    expect(context.explicit.entities.map((entity) => entity.id)).toEqual(["acme"]);
    expect(context.recentToolOutputs).toEqual([{ requestId: first.requestId, calls: [{ id: "c1", name: "crm_lookup" }] }]);
    expect(context.lookups[0]!.matches[0]).toMatchObject({ id: "acme" });
    expect(context.sizeBytes).toBeGreaterThan(0);
  });
});

describe("wire format", () => {
  const post = (path: string, body: unknown) =>
    fetch(`${test.url}/api/trpc/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${AGENT_KEY}` },
      body: JSON.stringify(body),
    });

  it("wire: thread-state errors are 4xx naming the field, never a 500", async () => {
    const sdk = createTollgate({ url: test.url, apiKey: AGENT_KEY });
    const { sessionId } = await sdk.openSession({});
    const { taskId, requestId } = await sdk.call("request.begin", { sessionId, agent: "wire" });

    const noConfig = await post("state.save", { taskId, requestId, state: { a: 1 } });
    expect(noConfig.status).toBe(412);
    expect((await noConfig.json()).error.message).toContain("thread.configure");

    const badConfig = await post("thread.configure", { taskId, config: { enabledTools: [1] } });
    expect(badConfig.status).toBe(400);
    expect((await badConfig.json()).error).toMatchObject({ message: expect.stringContaining("config.enabledTools[0]"), data: { details: { field: "config.enabledTools[0]" } } });

    expect((await post("thread.configure", { taskId, config: {} })).status).toBe(200);
    const badState = await post("state.save", { taskId, requestId, state: [1] });
    expect(badState.status).toBe(400);
    expect((await badState.json()).error.message).toMatch(/^invalid input: state/);
    const badBase = await post("state.save", { taskId, requestId, state: {}, baseVersion: "two" });
    expect(badBase.status).toBe(400);
    expect((await badBase.json()).error.message).toContain("baseVersion");

    expect((await post("state.save", { taskId, requestId, state: { a: 1 } })).status).toBe(200);
    const stale = await post("state.save", { taskId, requestId, state: { a: 2 }, baseVersion: 0 });
    expect(stale.status).toBe(409);
    expect((await stale.json()).error).toMatchObject({ message: expect.stringContaining("at version 1"), data: { details: { field: "baseVersion", currentVersion: 1 } } });

    const tooBig = await post("state.save", { taskId, requestId, state: { blob: "x".repeat(2 * 1024 * 1024) } });
    expect(tooBig.status).toBe(413);

    const badDiff = await fetch(`${test.url}/api/trpc/state.diff?input=${encodeURIComponent(JSON.stringify({ taskId, fromVersion: 0, toVersion: 9 }))}`, {
      headers: { cookie: "" },
    });
    expect(badDiff.status).toBe(401);
    await expect(operator.state.diff.query({ taskId, fromVersion: 0, toVersion: 9 })).rejects.toMatchObject({ data: { httpStatus: 404 } });
  });
});
