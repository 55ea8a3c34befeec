// tollgate-mcp, the MCP gateway, between the MCP SDK's real client and a real
// MCP server (test/fixtures-mcp-upstream.ts), each a process of its own, with
// one real Tollgate server for the file: every tool call is an approval, and
// the upstream's log of what it ran shows what got through.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { request as httpRequest } from "node:http";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateMessageRequestSchema, CreateTaskResultSchema, ElicitRequestSchema, ListRootsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OperatorClient } from "./clients.ts";
import { RUN_LEASE_MS } from "../server/domain/durable-run.ts";
import { toolDefinitionSha256 } from "../server/domain/tool-pins.ts";
import { withOneApproval } from "./agent-process.ts";
import { AGENT_KEY } from "./harness.ts";
import { nodeScript } from "./node-script.ts";
import { useTestServer, type TestServer } from "./server.ts";

const repository = path.resolve(import.meta.dirname, "..");
const CLI = path.join(repository, "sdk/src/gateway/cli.ts");
const UPSTREAM = path.join(repository, "test/fixtures-mcp-upstream.ts");
/** The command that runs a TypeScript file as its own process (bundled: test/node-script.ts). */
const nodeCommand = (file: string) => [process.execPath, nodeScript(file)] as const;

let test: TestServer;
let operator: OperatorClient;
useTestServer((started, loggedIn) => {
  test = started;
  operator = loggedIn;
});

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), "tollgate-mcp-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/**
 * Runs a command as the child of a parent that never reaps it (a shell that
 * becomes `sleep`): killed, it stays a zombie until that parent goes, as a
 * gateway does whose client has not reaped it yet. The parent says its pid.
 */
const unreaped = (command: readonly string[]) => ["/bin/sh", "-c", 'exec 3<&0; "$@" <&3 3<&- & echo "gateway pid $!" >&2; exec sleep 600 3<&-', "sh", ...command];

/** The kernel's state of a process (R, S, Z for a zombie, ...), or null once it is gone. */
async function processState(pid: number): Promise<string | null> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
  return stat === null ? null : stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
}

let connections = 0;
/** An MCP client whose server is `tollgate-mcp ... -- <the test upstream>`; it answers elicitations with `confirmed: true`. */
async function connect(options: { args?: string[]; env?: Record<string, string>; url?: string; log?: string; runId?: string; unreaped?: boolean } = {}) {
  connections += 1;
  const log = options.log ?? path.join(scratch, `upstream-${connections}.log`);
  await writeFile(log, "", { flag: "a" });
  const [node, ...command] = options.unreaped ? unreaped(nodeCommand(CLI)) : nodeCommand(CLI);
  const transport = new StdioClientTransport({
    command: node!,
    args: [
      ...command,
      "--url",
      options.url ?? test.url,
      "--progress-interval",
      "100",
      "--state-dir",
      path.join(scratch, "state"),
      ...(options.runId ? ["--run-id", options.runId] : []),
      ...(options.args ?? []),
      "--",
      ...nodeCommand(UPSTREAM),
    ],
    env: { ...(process.env as Record<string, string>), TOLLGATE_AGENT_KEY: AGENT_KEY, UPSTREAM_LOG: log, ...options.env },
    cwd: scratch,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk) => (stderr += chunk));
  const client = new Client({ name: "test-client", version: "1.0.0" }, { capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} } });
  const elicited: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicited.push(request.params.message);
    return { action: "accept", content: { confirmed: true } };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///work/notes", name: "notes" }] }));
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    const asked = request.params.messages[0]!.content;
    const text = !Array.isArray(asked) && asked.type === "text" ? asked.text : "";
    return { role: "assistant", model: "test-model", content: { type: "text", text: `the model read: ${text}` } };
  });
  await client.connect(transport);
  const ran = async () =>
    (await readFile(log, "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { tool: string; args: Record<string, unknown> });
  return { client, transport, ran, elicited, stderr: () => stderr, log };
}

const call = (client: Client, name: string, args: Record<string, unknown>, options: Parameters<Client["callTool"]>[2] = {}) =>
  client.callTool({ name, arguments: args }, CallToolResultSchema, options) as Promise<CallToolResult>;
const textOf = (result: CallToolResult) => result.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("\n");

/** Every approval of the gateway's agent that matches, whatever its status. */
async function approvalsOf(match: { tool: string; text?: string }) {
  return (await operator.approval.list.query({ agent: "files", ...match })).items;
}

async function pending(match: { tool: string; text?: string }, count = 1) {
  const read = async () => (await operator.approval.list.query({ status: "PENDING", agent: "files", ...match })).items;
  await expect.poll(async () => (await read()).length, { timeout: 30_000 }).toBe(count);
  return read();
}

describe("tollgate-mcp over stdio", () => {
  let shared: Awaited<ReturnType<typeof connect>>;
  beforeAll(async () => {
    shared = await connect();
  }, 180_000);
  afterAll(async () => {
    await shared?.client.close();
  });

  it("mcp gateway: the client lists the upstream's tools with their annotations, and an approved call runs once, its result kept on the approval", async () => {
    const { tools } = await shared.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["read_file", "delete_file", "confirm_with_user", "summarize_roots"]);
    expect(tools[0]!.annotations).toEqual({ title: "Read a file", readOnlyHint: true, openWorldHint: false });
    expect(shared.client.getServerVersion()).toMatchObject({ name: "files" });

    const called = call(shared.client, "delete_file", { recursive: true, path: "/tmp/approved" });
    const [approval] = await pending({ tool: "delete_file" });
    expect(Object.keys(approval!.args as object)).toEqual(["recursive", "path"]);
    expect(approval!.summary).toContain("MCP server **files** asks to run `delete_file`");
    expect(approval!.summary).toContain("> Deletes a file");
    expect(approval!.summary).toContain("read-only: no (not said; MCP's default)");
    expect(approval!.annotations).toEqual({ destructiveHint: true });
    expect(await shared.ran()).toEqual([]);
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });

    const result = await called;
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe("deleted /tmp/approved");
    expect(await shared.ran()).toEqual([{ tool: "delete_file", args: { recursive: true, path: "/tmp/approved" } }]);
    await expect
      .poll(async () => (await operator.approval.get.query({ approvalId: approval!.approvalId })).executionResult, { timeout: 10_000 })
      .toEqual({ text: "deleted /tmp/approved", isError: false });
  });

  it("mcp gateway: edit runs the operator's arguments; reject says the operator's message and never reaches the upstream; respond answers without running", async () => {
    const before = (await shared.ran()).length;
    const edited = call(shared.client, "delete_file", { path: "/" });
    const [toEdit] = await pending({ tool: "delete_file" });
    await operator.approval.decide.mutate({ approvalId: toEdit!.approvalId, action: "edit", args: { path: "/tmp/only-this" } });
    expect(textOf(await edited)).toBe("deleted /tmp/only-this");

    const rejected = call(shared.client, "delete_file", { path: "/home" });
    const [toReject] = await pending({ tool: "delete_file" });
    await operator.approval.decide.mutate({ approvalId: toReject!.approvalId, action: "reject", message: "never the home folder" });
    const refusal = await rejected;
    expect(refusal.isError).toBe(true);
    expect(textOf(refusal)).toContain("never the home folder");

    const answered = call(shared.client, "read_file", { path: "/etc/motd" });
    const [toAnswer] = await pending({ tool: "read_file" });
    await operator.approval.decide.mutate({ approvalId: toAnswer!.approvalId, action: "respond", message: "the motd says: welcome" });
    const response = await answered;
    expect(response.isError).toBeFalsy();
    expect(textOf(response)).toBe("the motd says: welcome");

    expect((await shared.ran()).slice(before)).toEqual([{ tool: "delete_file", args: { path: "/tmp/only-this" } }]);
  });

  it("mcp gateway: a call nobody decides in time expires as an error, not run", async () => {
    const { policyId } = await operator.policy.create.mutate({
      name: "expire quickly",
      match: { tool: "read_file", args: [{ path: "$.path", op: "eq", value: "/expires" }] },
      outcome: "require",
      timeoutMs: 1_000,
    });
    try {
      const result = await call(shared.client, "read_file", { path: "/expires" });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain("nobody decided in time");
      expect((await shared.ran()).filter((entry) => entry.args.path === "/expires")).toEqual([]);
    } finally {
      await operator.policy.delete.mutate({ policyId });
    }
  });

  it("mcp gateway: progress keeps the client's own short request timeout alive while a person decides", async () => {
    let beats = 0;
    // Three seconds of client timeout, reset by each progress notification (sent every 100 ms): a busy
    // machine can stall a process for a second, not for thirty beats. The decision comes after 35 beats,
    // at least 3.5 s after the call, past the timeout that would have ended it without them.
    const called = call(shared.client, "read_file", { path: "/slow" }, { timeout: 3_000, resetTimeoutOnProgress: true, onprogress: () => (beats += 1) });
    const [approval] = await pending({ tool: "read_file" });
    await expect.poll(() => beats, { timeout: 30_000 }).toBeGreaterThanOrEqual(35);
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });
    expect(textOf(await called)).toBe("contents of /slow");
  });

  it("mcp gateway: the client canceling a waiting call cancels its approval, and two calls at once are two approvals", async () => {
    const abort = new AbortController();
    const canceled = call(shared.client, "delete_file", { path: "/canceled" }, { signal: abort.signal });
    const [approval] = await pending({ tool: "delete_file" });
    abort.abort("the user stopped the agent");
    await expect(canceled).rejects.toThrow();
    await expect.poll(async () => (await operator.approval.get.query({ approvalId: approval!.approvalId })).status, { timeout: 10_000 }).toBe("CANCELED");

    const first = call(shared.client, "read_file", { path: "/one" });
    const second = call(shared.client, "read_file", { path: "/two" });
    const both = await pending({ tool: "read_file" }, 2);
    expect(both.map((item) => (item.args as { path: string }).path).sort()).toEqual(["/one", "/two"]);
    for (const item of both) await operator.approval.decide.mutate({ approvalId: item.approvalId, action: "approve" });
    expect([textOf(await first), textOf(await second)]).toEqual(["contents of /one", "contents of /two"]);
    expect((await shared.ran()).filter((entry) => entry.args.path === "/canceled")).toEqual([]);
  });

  it("mcp gateway: the upstream's elicitation during an approved call reaches the client and its answer goes back", async () => {
    const called = call(shared.client, "confirm_with_user", { question: "Really ship it?" });
    const [approval] = await pending({ tool: "confirm_with_user" });
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });
    expect(JSON.parse(textOf(await called))).toEqual({ action: "accept", content: { confirmed: true } });
    expect(shared.elicited).toEqual(["Really ship it?"]);
  });

  it("mcp gateway: the upstream's roots and sampling requests reach the client and its answers go back", async () => {
    const called = call(shared.client, "summarize_roots", {});
    const [approval] = await pending({ tool: "summarize_roots" });
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });
    expect(textOf(await called)).toBe("the model read: Summarize: file:///work/notes");
  });
});

describe("tollgate-mcp and MCP tasks", () => {
  it("mcp gateway: a task-augmented call is the client's task at once, working while its approval waits; approved it completes with the upstream's result, rejected it fails with the operator's message and never runs, canceled it cancels its approval", async () => {
    const tasked = await connect({ env: { UPSTREAM_TASKS: "1" } });
    const tasks = tasked.client.experimental.tasks;
    expect(tasked.client.getServerCapabilities()?.tasks?.requests?.tools?.call).toEqual({});
    expect((await tasked.client.listTools()).tools.find((tool) => tool.name === "export_report")?.execution).toEqual({ taskSupport: "required" });
    const startTask = async (name: string, args: Record<string, unknown>, onprogress?: () => void) =>
      (await tasked.client.request({ method: "tools/call", params: { name, arguments: args } }, CreateTaskResultSchema, { task: { ttl: 120_000 }, ...(onprogress && { onprogress }) })).task;
    const statusOf = async (taskId: string) => (await tasks.getTask(taskId)).status;
    try {
      // A client that gave a progress token hears, after it has its task, that the task still waits.
      let beats = 0;
      const approvedTask = await startTask("delete_file", { path: "/task-approved" }, () => (beats += 1));
      expect(approvedTask.status).toBe("working");
      const [approval] = await pending({ tool: "delete_file", text: "/task-approved" });
      await expect.poll(() => beats, { timeout: 15_000 }).toBeGreaterThanOrEqual(3);
      await expect.poll(async () => (await tasks.getTask(approvedTask.taskId)).statusMessage, { timeout: 10_000 }).toBe("waiting for a decision in Tollgate");
      expect(await statusOf(approvedTask.taskId)).toBe("working");
      expect(await tasked.ran()).toEqual([]);
      await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });
      await expect.poll(() => statusOf(approvedTask.taskId), { timeout: 15_000 }).toBe("completed");
      expect(textOf((await tasks.getTaskResult(approvedTask.taskId, CallToolResultSchema)) as CallToolResult)).toBe("deleted /task-approved");

      const rejectedTask = await startTask("delete_file", { path: "/task-rejected" });
      const [toReject] = await pending({ tool: "delete_file", text: "/task-rejected" });
      await operator.approval.decide.mutate({ approvalId: toReject!.approvalId, action: "reject", message: "not this one" });
      await expect.poll(() => statusOf(rejectedTask.taskId), { timeout: 15_000 }).toBe("failed");
      const refusal = (await tasks.getTaskResult(rejectedTask.taskId, CallToolResultSchema)) as CallToolResult;
      expect(refusal.isError).toBe(true);
      expect(textOf(refusal)).toContain("not this one");

      // A tool the upstream runs only as a task: the gateway asks it for one of its own, after the approval.
      const exportTask = await startTask("export_report", { name: "q3" });
      const [toExport] = await pending({ tool: "export_report" });
      expect(await tasked.ran()).toEqual([{ tool: "delete_file", args: { path: "/task-approved" } }]);
      await operator.approval.decide.mutate({ approvalId: toExport!.approvalId, action: "approve" });
      await expect.poll(() => statusOf(exportTask.taskId), { timeout: 15_000 }).toBe("completed");
      expect(textOf((await tasks.getTaskResult(exportTask.taskId, CallToolResultSchema)) as CallToolResult)).toBe("exported q3");

      const canceledTask = await startTask("delete_file", { path: "/task-canceled" });
      const [toCancel] = await pending({ tool: "delete_file", text: "/task-canceled" });
      expect((await tasks.cancelTask(canceledTask.taskId)).status).toBe("cancelled");
      await expect.poll(async () => (await operator.approval.get.query({ approvalId: toCancel!.approvalId })).status, { timeout: 15_000 }).toBe("CANCELED");
      expect(await statusOf(canceledTask.taskId)).toBe("cancelled");

      const ran = await tasked.ran();
      expect(ran.filter((entry) => entry.tool === "delete_file")).toEqual([{ tool: "delete_file", args: { path: "/task-approved" } }]);
      expect(ran.filter((entry) => entry.tool === "export_report")).toEqual([{ tool: "export_report", args: { name: "q3" } }]);
    } finally {
      await tasked.client.close();
    }
  });
});

describe("tollgate-mcp under rules that know MCP", () => {
  it("mcp gateway: an admin pins a tool from its call's approval, by the hash shown; then pinned read-only tools of the files server are approved at once, and when the server changes the tool's description a person decides again", async () => {
    const { policyId } = await operator.policy.create.mutate({ name: "pinned reads of files", match: { agent: "files", pinned: true, annotations: { readOnlyHint: true } }, outcome: "approve" });
    // Read back whole: a console that lost the conditions would widen the rule when saving an edit.
    const stored = (await operator.policy.list.query()).items.find((rule) => rule.policyId === policyId);
    expect(stored?.match).toEqual({ agent: "files", pinned: true, annotations: { readOnlyHint: true } });
    const first = await connect();
    try {
      // Not pinned yet: a person decides, and the approval keeps the tool as the server listed it.
      const beforePin = call(first.client, "read_file", { path: "/before-pin" });
      const [approval] = await pending({ tool: "read_file", text: "/before-pin" });
      const listed = (await first.client.listTools()).tools.find((tool) => tool.name === "read_file")!;
      const sha256 = toolDefinitionSha256({ name: listed.name, description: listed.description, annotations: listed.annotations, inputSchema: listed.inputSchema });
      const shown = (await operator.approval.get.query({ approvalId: approval!.approvalId })).mcpTool;
      expect(shown).toEqual({ name: "read_file", description: "Reads a file", sha256 });

      // What the admin was not shown is not pinned.
      await expect(operator.policy.pinToolFromApproval.mutate({ approvalId: approval!.approvalId, sha256: "0".repeat(64) })).rejects.toThrow(/not 0{64} as you were shown; nothing was pinned/);
      expect((await operator.policy.pins.query()).items.filter((pin) => pin.agent === "files")).toEqual([]);
      const pin = await operator.policy.pinToolFromApproval.mutate({ approvalId: approval!.approvalId, sha256 });
      expect(pin).toMatchObject({ agent: "files", tool: "read_file", sha256 });
      await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });
      expect(textOf(await beforePin)).toBe("contents of /before-pin");

      // The next identical call is the pinned tool: the rule approves it, nobody is asked.
      expect(textOf(await call(first.client, "read_file", { path: "/pinned" }))).toBe("contents of /pinned");
      const [auto] = (await operator.approval.list.query({ agent: "files", tool: "read_file", text: "/pinned" })).items;
      expect(auto).toMatchObject({ status: "APPROVED", decider: "policy", policy: { name: "pinned reads of files" } });
      await first.client.close();

      const changed = await connect({ env: { UPSTREAM_READ_DESCRIPTION: "Reads a file and uploads it to a third party" } });
      const asked = call(changed.client, "read_file", { path: "/pinned-but-changed" });
      const [again] = await pending({ tool: "read_file", text: "/pinned-but-changed" });
      expect(again!.summary).toContain("uploads it to a third party");
      expect(again!.mcpTool?.sha256).not.toBe(sha256);
      await operator.approval.decide.mutate({ approvalId: again!.approvalId, action: "reject", message: "the tool changed since it was pinned" });
      expect((await asked).isError).toBe(true);
      expect(await changed.ran()).toEqual([]);
      await changed.client.close();
      await operator.policy.unpinTool.mutate({ pinId: pin.pinId });
    } finally {
      await operator.policy.delete.mutate({ policyId });
    }
  });
});

describe("tollgate-mcp fails closed and survives its own death", () => {
  it("mcp gateway: with Tollgate unreachable, or the key refused, the call is an error that says why and the upstream is not called", async () => {
    const unreachable = await connect({ url: "http://127.0.0.1:9/" });
    const down = await call(unreachable.client, "delete_file", { path: "/x" });
    expect(down.isError).toBe(true);
    expect(textOf(down)).toMatch(/^Tollgate could not be asked, so the tool was not run: /);
    expect(await unreachable.ran()).toEqual([]);
    await unreachable.client.close();

    const refused = await connect({ env: { TOLLGATE_AGENT_KEY: "tgk_not_a_key_of_this_server_000" } });
    const denied = await call(refused.client, "delete_file", { path: "/x" });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toContain("not run");
    expect(await refused.ran()).toEqual([]);
    await refused.client.close();
  });

  it("mcp gateway: a client that disconnects while waiting cancels its approval", async () => {
    const gone = await connect();
    void call(gone.client, "delete_file", { path: "/disconnect" }).catch(() => undefined);
    const [approval] = await pending({ tool: "delete_file", text: "/disconnect" });
    await gone.client.close();
    await expect.poll(async () => (await operator.approval.get.query({ approvalId: approval!.approvalId })).status, { timeout: 15_000 }).toBe("CANCELED");
    expect(await gone.ran()).toEqual([]);
  });

  it("mcp gateway: killed mid-wait, not yet reaped, and started again with its run id, it takes the run over at once (not after the dead one's lease), asks nothing twice and runs nothing twice", async () => {
    const log = path.join(scratch, "restart.log");
    const first = await connect({ runId: "restart-run", log, unreaped: true });
    void call(first.client, "delete_file", { path: "/restart" }).catch(() => undefined);
    const [approval] = await pending({ tool: "delete_file", text: "/restart" });
    const gatewayPid = Number(/gateway pid (\d+)/.exec(first.stderr())![1]);
    process.kill(gatewayPid, "SIGKILL");
    // Its client has not reaped it: a zombie, which signal 0 still finds.
    await expect.poll(() => processState(gatewayPid), { timeout: 10_000 }).toBe("Z");
    // The server's clock stands still from here: the dead gateway's lease never lapses, so
    // only taking it over at once (not waiting it out) lets the new gateway continue.
    const deps = test.server.deps;
    const realNow = deps.now;
    const frozen = realNow();
    deps.now = () => frozen;

    const second = await connect({ runId: "restart-run", log });
    const asked = () => approvalsOf({ tool: "delete_file", text: "/restart" });
    try {
      const again = call(second.client, "delete_file", { path: "/restart" });
      await withOneApproval(asked, expect.poll(() => second.stderr(), { timeout: RUN_LEASE_MS }).toContain('run "restart-run" continued'));
      deps.now = realNow;
      // The dead gateway's approval is the one still waiting: no second one is asked.
      const [still] = await pending({ tool: "delete_file", text: "/restart" });
      expect(still!.approvalId).toBe(approval!.approvalId);
      await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });
      expect(textOf(await withOneApproval(asked, again))).toBe("deleted /restart");
      expect(await second.ran()).toEqual([{ tool: "delete_file", args: { path: "/restart" } }]);
      expect((await asked()).map((item) => item.approvalId)).toEqual([approval!.approvalId]);
    } finally {
      deps.now = realNow;
      await second.client.close();
      await first.client.close();
    }
  });

  it("mcp gateway: a task waiting when its gateway is killed is the task of the gateway started again with the run id: tasks/get says it waits, no second approval is asked, and approved, tasks/result gives what ran once", async () => {
    const log = path.join(scratch, "task-restart.log");
    const first = await connect({ runId: "task-restart-run", log, env: { UPSTREAM_TASKS: "1" } });
    const { task } = await first.client.request({ method: "tools/call", params: { name: "delete_file", arguments: { path: "/task-restart" } } }, CreateTaskResultSchema, { task: { ttl: 600_000 } });
    const [approval] = await pending({ tool: "delete_file", text: "/task-restart" });
    process.kill(first.transport.pid!, "SIGKILL");
    await first.client.close();

    const second = await connect({ runId: "task-restart-run", log, env: { UPSTREAM_TASKS: "1" } });
    try {
      const tasks = second.client.experimental.tasks;
      expect(await tasks.getTask(task.taskId)).toMatchObject({ taskId: task.taskId, status: "working", statusMessage: "waiting for a decision in Tollgate" });
      const [still] = await pending({ tool: "delete_file", text: "/task-restart" });
      expect(still!.approvalId).toBe(approval!.approvalId);
      await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });
      const asked = () => approvalsOf({ tool: "delete_file", text: "/task-restart" });
      await withOneApproval(asked, expect.poll(async () => (await tasks.getTask(task.taskId)).status, { timeout: 15_000 }).toBe("completed"));
      expect(textOf((await tasks.getTaskResult(task.taskId, CallToolResultSchema)) as CallToolResult)).toBe("deleted /task-restart");
      expect(await second.ran()).toEqual([{ tool: "delete_file", args: { path: "/task-restart" } }]);
      expect((await asked()).map((item) => item.approvalId)).toEqual([approval!.approvalId]);
    } finally {
      await second.client.close();
    }
  });

  it("mcp gateway: started again without a run id, it cancels what the dead gateway left pending, though its client has not reaped it yet", async () => {
    const first = await connect({ unreaped: true });
    void call(first.client, "delete_file", { path: "/orphaned" }).catch(() => undefined);
    const [approval] = await pending({ tool: "delete_file", text: "/orphaned" });
    const gatewayPid = Number(/gateway pid (\d+)/.exec(first.stderr())![1]);
    process.kill(gatewayPid, "SIGKILL");
    await expect.poll(() => processState(gatewayPid), { timeout: 10_000 }).toBe("Z");

    const second = await connect();
    try {
      await expect.poll(async () => (await operator.approval.get.query({ approvalId: approval!.approvalId })).status, { timeout: 15_000 }).toBe("CANCELED");
      expect(await first.ran()).toEqual([]);
    } finally {
      await second.client.close();
      await first.client.close();
    }
  });
});

describe("tollgate-mcp over Streamable HTTP", () => {
  // One upstream server over HTTP and one gateway serving HTTP, shared by the block's clients;
  // the gateways a test needs of its own (Tollgate unreachable, a run restarted) reach the same upstream.
  const TOKEN = "listen-token-0123456789abcdef";
  const UPSTREAM_ENV = { TOLLGATE_AGENT_KEY: AGENT_KEY, TOLLGATE_MCP_LISTEN_TOKEN: TOKEN, TOLLGATE_MCP_UPSTREAM_HEADER_AUTHORIZATION: "Bearer upstream-secret" };
  const children: ReturnType<typeof spawn>[] = [];
  let upstreamUrl: string;
  let gatewayUrl: string;
  let log: string;

  /** Starts a process and waits for the line it prints that matches `ready` (on stdout or stderr); `output` waits for a later line. */
  async function started(args: readonly string[], env: Record<string, string>, ready: RegExp) {
    const child = spawn(args[0]!, args.slice(1), { cwd: scratch, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let output = "";
    const watchers = new Set<() => void>();
    const look = (chunk: Buffer) => {
      output += chunk;
      for (const watcher of watchers) watcher();
    };
    child.stdout!.on("data", look);
    child.stderr!.on("data", look);
    const printed = (pattern: RegExp) =>
      new Promise<string>((resolve, reject) => {
        const watcher = () => {
          const found = pattern.exec(output);
          if (found) {
            watchers.delete(watcher);
            resolve(found[1] ?? found[0]);
          }
        };
        watchers.add(watcher);
        child.once("exit", (code) => reject(new Error(`exited with ${code}: ${output}`)));
        watcher();
      });
    return { child, url: await printed(ready), printed };
  }

  /** A gateway serving HTTP in front of the shared upstream. */
  const gateway = (args: string[] = [], url = test.url) =>
    started([...nodeCommand(CLI), "--url", url, "--listen", "0", "--upstream", upstreamUrl, "--progress-interval", "100", "--state-dir", path.join(scratch, "state"), ...args], UPSTREAM_ENV, /serving MCP at (http:\S+)\n/);

  /** An MCP client over HTTP; like connect()'s, it answers elicitations with `confirmed: true`. */
  async function httpClient(url = gatewayUrl) {
    const client = new Client({ name: "http-client", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
    const elicited: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicited.push(request.params.message);
      return { action: "accept", content: { confirmed: true } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
    return { client, elicited };
  }

  /** What the upstream ran for these paths (the log is the block's). */
  const ranFor = async (...paths: string[]) =>
    (await readFile(log, "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { tool: string; args: Record<string, unknown> })
      .filter((entry) => paths.includes(entry.args.path as string) || paths.includes(entry.args.question as string));

  let shared: Awaited<ReturnType<typeof httpClient>>;
  beforeAll(async () => {
    log = path.join(scratch, "http-upstream.log");
    await writeFile(log, "");
    upstreamUrl = (await started(nodeCommand(UPSTREAM), { UPSTREAM_HTTP: "1", UPSTREAM_TOKEN: "upstream-secret", UPSTREAM_LOG: log }, /^(http:\S+)\n/m)).url;
    gatewayUrl = (await gateway()).url;
    shared = await httpClient();
  }, 180_000);
  afterAll(async () => {
    await shared?.client.close();
    for (const child of children) child.kill();
  });

  it("mcp gateway: --listen refuses a request without its token, from a foreign Origin or for a foreign Host, and serves one with it", async () => {
    const initialize = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } });
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const post = (extra: Record<string, string>) => fetch(gatewayUrl, { method: "POST", headers: { ...headers, ...extra }, body: initialize });
    expect((await post({})).status).toBe(401);
    expect((await post({ authorization: "Bearer not-the-token" })).status).toBe(401);
    const foreign = await post({ authorization: `Bearer ${TOKEN}`, origin: "http://attacker.example" });
    expect(foreign.status).toBe(403);
    expect(await foreign.text()).toContain("origin http://attacker.example");
    // A name rebound to 127.0.0.1 arrives with that name in Host.
    const rebound = await new Promise<number>((resolve, reject) => {
      const target = new URL(gatewayUrl);
      const request = httpRequest({ host: target.hostname, port: target.port, path: target.pathname, method: "POST", headers: { ...headers, authorization: `Bearer ${TOKEN}`, host: `rebound.example:${target.port}` } }, (response) => {
        response.resume();
        resolve(response.statusCode!);
      });
      request.on("error", reject);
      request.end(initialize);
    });
    expect(rebound).toBe(403);

    const { tools } = await shared.client.listTools();
    expect(tools.find((tool) => tool.name === "read_file")?.annotations).toMatchObject({ readOnlyHint: true });
    const called = call(shared.client, "read_file", { path: "/over-http" });
    const [approval] = await pending({ tool: "read_file", text: "/over-http" });
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });
    expect(textOf(await called)).toBe("contents of /over-http");
    expect(await ranFor("/over-http")).toEqual([{ tool: "read_file", args: { path: "/over-http" } }]);
  });

  it("mcp gateway over HTTP: edit runs the operator's arguments, reject says the operator's message and never reaches the upstream, respond answers without running", async () => {
    const edited = call(shared.client, "delete_file", { path: "/http-edit" });
    const [toEdit] = await pending({ tool: "delete_file", text: "/http-edit" });
    await operator.approval.decide.mutate({ approvalId: toEdit!.approvalId, action: "edit", args: { path: "/http-edited" } });
    expect(textOf(await edited)).toBe("deleted /http-edited");

    const rejected = call(shared.client, "delete_file", { path: "/http-reject" });
    const [toReject] = await pending({ tool: "delete_file", text: "/http-reject" });
    await operator.approval.decide.mutate({ approvalId: toReject!.approvalId, action: "reject", message: "not over HTTP either" });
    const refusal = await rejected;
    expect(refusal.isError).toBe(true);
    expect(textOf(refusal)).toContain("not over HTTP either");

    const answered = call(shared.client, "read_file", { path: "/http-respond" });
    const [toAnswer] = await pending({ tool: "read_file", text: "/http-respond" });
    await operator.approval.decide.mutate({ approvalId: toAnswer!.approvalId, action: "respond", message: "it says hello" });
    const response = await answered;
    expect(response.isError).toBeFalsy();
    expect(textOf(response)).toBe("it says hello");
    expect(await ranFor("/http-edit", "/http-edited", "/http-reject", "/http-respond")).toEqual([{ tool: "delete_file", args: { path: "/http-edited" } }]);
  });

  it("mcp gateway over HTTP: the client canceling a waiting call cancels its approval, two calls at once are two approvals, and the upstream's elicitation reaches the client", async () => {
    const abort = new AbortController();
    const canceled = call(shared.client, "delete_file", { path: "/http-canceled" }, { signal: abort.signal });
    const [approval] = await pending({ tool: "delete_file", text: "/http-canceled" });
    abort.abort("the user stopped the agent");
    await expect(canceled).rejects.toThrow();
    await expect.poll(async () => (await operator.approval.get.query({ approvalId: approval!.approvalId })).status, { timeout: 15_000 }).toBe("CANCELED");

    const first = call(shared.client, "read_file", { path: "/http-one" });
    const second = call(shared.client, "read_file", { path: "/http-two" });
    const both = await pending({ tool: "read_file", text: "/http-" }, 2);
    expect(both.map((item) => (item.args as { path: string }).path).sort()).toEqual(["/http-one", "/http-two"]);
    for (const item of both) await operator.approval.decide.mutate({ approvalId: item.approvalId, action: "approve" });
    expect([textOf(await first), textOf(await second)]).toEqual(["contents of /http-one", "contents of /http-two"]);

    const confirmed = call(shared.client, "confirm_with_user", { question: "Ship it over HTTP?" });
    const [toConfirm] = await pending({ tool: "confirm_with_user", text: "over HTTP" });
    await operator.approval.decide.mutate({ approvalId: toConfirm!.approvalId, action: "approve" });
    expect(JSON.parse(textOf(await confirmed))).toEqual({ action: "accept", content: { confirmed: true } });
    expect(shared.elicited).toEqual(["Ship it over HTTP?"]);
    expect(await ranFor("/http-canceled")).toEqual([]);
  });

  it("mcp gateway over HTTP: a client that ends its session while waiting cancels its approval, and one whose connection drops cancels it too", async () => {
    const leaving = await httpClient();
    void call(leaving.client, "delete_file", { path: "/http-session-ended" }).catch(() => undefined);
    const [ended] = await pending({ tool: "delete_file", text: "/http-session-ended" });
    await (leaving.client.transport as StreamableHTTPClientTransport).terminateSession();
    await leaving.client.close();
    await expect.poll(async () => (await operator.approval.get.query({ approvalId: ended!.approvalId })).status, { timeout: 15_000 }).toBe("CANCELED");

    const dropped = await httpClient();
    void call(dropped.client, "delete_file", { path: "/http-dropped" }).catch(() => undefined);
    const [lost] = await pending({ tool: "delete_file", text: "/http-dropped" });
    await dropped.client.close();
    await expect.poll(async () => (await operator.approval.get.query({ approvalId: lost!.approvalId })).status, { timeout: 15_000 }).toBe("CANCELED");
    expect(await ranFor("/http-session-ended", "/http-dropped")).toEqual([]);
  });

  it("mcp gateway over HTTP: with Tollgate unreachable, the call is an error that says why and the upstream is not called", async () => {
    const unreachable = await gateway([], "http://127.0.0.1:9/");
    const { client } = await httpClient(unreachable.url);
    try {
      const down = await call(client, "delete_file", { path: "/http-unreachable" });
      expect(down.isError).toBe(true);
      expect(textOf(down)).toMatch(/^Tollgate could not be asked, so the tool was not run: /);
      expect(await ranFor("/http-unreachable")).toEqual([]);
    } finally {
      await client.close();
      unreachable.child.kill();
    }
  });
  it("mcp gateway over HTTP: killed mid-wait and started again with its run id, it asks nothing twice and runs nothing twice", async () => {
    const first = await gateway(["--run-id", "http-restart-run"]);
    const dying = await httpClient(first.url);
    void call(dying.client, "delete_file", { path: "/http-restart" }).catch(() => undefined);
    const [approval] = await pending({ tool: "delete_file", text: "/http-restart" });
    // Gone for good before the next one starts (not a pid still waiting to be reaped): it takes the run over at once.
    const exited = once(first.child, "exit");
    first.child.kill("SIGKILL");
    await exited;
    await dying.client.close().catch(() => undefined);

    const second = await gateway(["--run-id", "http-restart-run"]);
    const { client } = await httpClient(second.url);
    try {
      const again = call(client, "delete_file", { path: "/http-restart" });
      const asked = () => approvalsOf({ tool: "delete_file", text: "/http-restart" });
      await withOneApproval(asked, second.printed(/run "http-restart-run" continued/));
      // The dead gateway's approval is the one still waiting: no second one is asked.
      const [still] = await pending({ tool: "delete_file", text: "/http-restart" });
      expect(still!.approvalId).toBe(approval!.approvalId);
      await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });
      expect(textOf(await withOneApproval(asked, again))).toBe("deleted /http-restart");
      expect(await ranFor("/http-restart")).toEqual([{ tool: "delete_file", args: { path: "/http-restart" } }]);
      expect((await asked()).map((item) => item.approvalId)).toEqual([approval!.approvalId]);
    } finally {
      await client.close();
      second.child.kill();
    }
  });
});
