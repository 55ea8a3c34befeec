// The Claude Agent SDK adapter (@tollgate/sdk/claude-agent). Its canUseTool is
// called first the way the SDK calls it, then by the SDK itself: the bundled
// Claude Code binary runs against a local stand-in for the Anthropic Messages
// API (ANTHROPIC_BASE_URL and a dummy key) that scripts the model's tool calls,
// so neither a model nor the network is needed. An operator decides over HTTP.
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createSdkMcpServer, query, tool, type CanUseTool, type Options } from "@anthropic-ai/claude-agent-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { RunCanceledError, runWithApprovals, tollgateCanUseTool } from "../sdk/src/adapters/claude-agent.ts";
import { startMessagesApi, type ModelTurn } from "./anthropic-messages-standin.ts";
import { agentSdk, type OperatorClient } from "./clients.ts";
import { useTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let operator: OperatorClient;
useTestServer((started, loggedIn) => {
  test = started;
  operator = loggedIn;
});

// Whatever a test opened, closed after it whether it passed or not.
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A Tollgate request of the Claude agent `agent`, begun as the adapter's runWithApprovals begins one. */
async function begun(agent: string) {
  const tollgate = agentSdk(test.url);
  cleanups.push(() => tollgate.close());
  const { sessionId } = await tollgate.openSession({ title: agent });
  const request = await tollgate.begin({ sessionId, agent, framework: "claude-agent" });
  return { tollgate, sessionId, request };
}

/** The pending approvals of a session once there are `count` of them, oldest first. */
async function pending(sessionId: string, count: number) {
  const read = async () => (await operator.approval.list.query({ sessionId, status: "PENDING" })).items;
  // A guard, not a measure: Claude Code's process starts slowly on a busy machine.
  await expect.poll(async () => (await read()).length, { timeout: 90_000 }).toBe(count);
  return (await read()).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || (a.externalId ?? "").localeCompare(b.externalId ?? ""));
}

let calls = 0;
/** What the SDK passes canUseTool about one call (the control request's fields it always sends). */
function sdkCall(toolUseID: string, signal = new AbortController().signal, more: Partial<Parameters<CanUseTool>[2]> = {}): Parameters<CanUseTool>[2] {
  return { signal, toolUseID, requestId: `control-${++calls}`, suggestions: [], ...more };
}

const sorted = (actions: readonly string[]) => [...actions].sort();

describe("Claude Agent SDK adapter: canUseTool called as the SDK calls it", () => {
  it("claude agent: a call is one approval under its toolUseID; approve allows it with the input as proposed", async () => {
    const { tollgate, sessionId, request } = await begun("coder");
    const canUseTool = tollgateCanUseTool({ tollgate, requestId: request.requestId });
    const input = { file_path: "/work/notes.txt", content: "draft" };
    const answer = canUseTool("Write", input, sdkCall("toolu_approve", undefined, { title: "Claude wants to write notes.txt", decisionReason: "writes outside the allowed rules" }));

    const [approval] = await pending(sessionId, 1);
    expect(approval).toMatchObject({
      tool: "Write",
      args: input,
      externalId: "toolu_approve",
      framework: "claude-agent",
      summary: "Claude wants to write notes.txt",
      reason: "writes outside the allowed rules",
    });
    // The SDK can allow (as proposed or edited) or deny with a message: no free-text answer.
    expect(sorted(approval!.allow)).toEqual(["approve", "edit", "reject"]);
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });
    expect(await answer).toEqual({ behavior: "allow", updatedInput: input });

    // The same call asked again (a retry, another process) gets the decided approval, not a new one.
    expect(await canUseTool("Write", input, sdkCall("toolu_approve"))).toEqual({ behavior: "allow", updatedInput: input });
    expect((await operator.approval.list.query({ sessionId })).items).toHaveLength(1);
  });

  it("claude agent: an edit allows the call with the operator's arguments as updatedInput", async () => {
    const { tollgate, sessionId, request } = await begun("coder");
    const canUseTool = tollgateCanUseTool({ tollgate, requestId: request.requestId, summary: "Deploys **production**" });
    const answer = canUseTool("Bash", { command: "deploy --all" }, sdkCall("toolu_edit"));

    const [approval] = await pending(sessionId, 1);
    expect(approval).toMatchObject({ tool: "Bash", args: { command: "deploy --all" }, summary: "Deploys **production**" });
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "edit", args: { command: "deploy --canary" } });
    expect(await answer).toEqual({ behavior: "allow", updatedInput: { command: "deploy --canary" } });
  });

  it("claude agent: a rejection denies the call with the operator's message, which the model reads", async () => {
    const { tollgate, sessionId, request } = await begun("coder");
    const canUseTool = tollgateCanUseTool({ tollgate, requestId: request.requestId });
    const withMessage = canUseTool("Bash", { command: "rm -rf build" }, sdkCall("toolu_reject_1", undefined, { displayName: "Run shell command", description: "Removes the build" }));
    const [first] = await pending(sessionId, 1);
    expect(first!.summary).toBe("Run shell command: Removes the build");
    await operator.approval.decide.mutate({ approvalId: first!.approvalId, action: "reject", message: "keep the build, clean only dist" });
    expect(await withMessage).toEqual({ behavior: "deny", message: "keep the build, clean only dist" });

    const without = canUseTool("Bash", { command: "rm -rf dist" }, sdkCall("toolu_reject_2"));
    const [second] = await pending(sessionId, 1);
    await operator.approval.decide.mutate({ approvalId: second!.approvalId, action: "reject" });
    expect(await without).toEqual({ behavior: "deny", message: "An operator rejected this call." });
  });

  it("claude agent: when the SDK aborts the call the wait ends; once the request ends, the call is denied and the turn interrupted", async () => {
    const { tollgate, sessionId, request } = await begun("coder");
    const canUseTool = tollgateCanUseTool({ tollgate, requestId: request.requestId });
    const controller = new AbortController();
    const answer = canUseTool("Write", { file_path: "/a", content: "x" }, sdkCall("toolu_abort", controller.signal));
    const [approval] = await pending(sessionId, 1);
    controller.abort(new Error("the SDK canceled the permission request"));
    await expect(answer).rejects.toThrow("the SDK canceled the permission request");
    // Already aborted: nothing is asked.
    await expect(canUseTool("Write", { file_path: "/b", content: "y" }, sdkCall("toolu_aborted_before", controller.signal))).rejects.toThrow("the SDK canceled");

    // Failing the request ends its pending approval, and with it the SDK client's wait.
    await request.fail({ message: "the run stopped" });
    expect(await operator.approval.get.query({ approvalId: approval!.approvalId })).toMatchObject({ status: "CANCELED" });
    const again = await canUseTool("Write", { file_path: "/a", content: "x" }, sdkCall("toolu_abort"));
    expect(again).toMatchObject({ behavior: "deny", interrupt: true });
    expect((again as { message: string }).message).toContain("canceled");
    expect((await operator.approval.list.query({ sessionId })).items.map((item) => item.externalId)).toEqual(["toolu_abort"]);
  });

  it("claude agent: no decision in time denies the call", async () => {
    const { tollgate, request } = await begun("coder");
    const canUseTool = tollgateCanUseTool({ tollgate, requestId: request.requestId, timeoutMs: 300, onTimeout: "reject" });
    expect(await canUseTool("Bash", { command: "make release" }, sdkCall("toolu_timeout"))).toEqual({ behavior: "deny", message: "No one decided in time; the call did not run." });
  });

  it("claude agent: Claude's AskUserQuestion asks each question as a question, shown together, and answers by question text", async () => {
    const { tollgate, sessionId, request } = await begun("coder");
    const canUseTool = tollgateCanUseTool({ tollgate, requestId: request.requestId });
    const input = {
      questions: [
        { question: "Which order should I refund?", header: "Order", multiSelect: false, options: [{ label: "1001", description: "Paid twice" }, { label: "1002", description: "Late" }] },
        { question: "Should I email the customer?", header: "Email", multiSelect: false, options: [{ label: "Yes", description: "" }, { label: "No", description: "" }] },
      ],
    };
    const answer = canUseTool("AskUserQuestion", input, sdkCall("toolu_ask"));
    const asked = await pending(sessionId, 2);
    expect(asked.map((item) => [item.kind, item.externalId, sorted(item.allow)])).toEqual([
      ["question", "toolu_ask:0", ["reject", "respond"]],
      ["question", "toolu_ask:1", ["reject", "respond"]],
    ]);
    expect(asked[0]!.batch).toEqual(asked[1]!.batch);
    expect(asked[0]!.summary).toContain("Which order should I refund?");
    expect(asked[0]!.summary).toContain("**1001**: Paid twice");
    await operator.approval.decide.mutate({ approvalId: asked[0]!.approvalId, action: "respond", message: "1001, the double payment" });
    await operator.approval.decide.mutate({ approvalId: asked[1]!.approvalId, action: "reject", message: "I will call them" });
    expect(await answer).toEqual({
      behavior: "allow",
      updatedInput: {
        ...input,
        answers: { "Which order should I refund?": "1001, the double payment", "Should I email the customer?": "(declined to answer: I will call them)" },
      },
    });
  });
});

// ---- The SDK itself, on a scripted stand-in for the Messages API ------------------

/** The stand-in API for one test, closed after it. */
async function messagesApi(script: ModelTurn[]) {
  const api = await startMessagesApi(script);
  cleanups.push(api.close);
  return api;
}

/** Options that keep the SDK's Claude Code process offline, on the stand-in API, and out of this machine's settings. */
async function offline(apiUrl: string): Promise<Options & { cwd: string }> {
  const home = await mkdtemp(path.join(tmpdir(), "claude-agent-home-"));
  const cwd = await mkdtemp(path.join(tmpdir(), "claude-agent-work-"));
  cleanups.push(() => rm(home, { recursive: true, force: true }), () => rm(cwd, { recursive: true, force: true }));
  // A deadline on the process: a run that hangs ends the test instead of the suite.
  const abortController = new AbortController();
  setTimeout(() => abortController.abort(), 45_000).unref();
  return {
    cwd,
    abortController,
    // Asks the host (canUseTool) about every call the SDK would ask its user about.
    permissionMode: "default",
    settingSources: [],
    persistSession: false,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: home,
      CLAUDE_CONFIG_DIR: path.join(home, ".claude"),
      // Its scratch files too, removed with the home.
      CLAUDE_CODE_TMPDIR: home,
      ANTHROPIC_BASE_URL: apiUrl,
      ANTHROPIC_API_KEY: "sk-ant-offline-test",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    },
  };
}

/** Starts `query(prompt)` as a Tollgate run of `agent` in a new session. */
async function startRun(agent: string, prompt: string, options: Options) {
  const tollgate = agentSdk(test.url);
  cleanups.push(() => tollgate.close());
  const { sessionId } = await tollgate.openSession({ title: agent });
  const run = runWithApprovals((canUseTool) => query({ prompt, options: { ...options, canUseTool } }), { tollgate, sessionId, agent });
  // Settled by the test; a test that fails first must not leave a rejection unhandled.
  run.catch(() => undefined);
  return { sessionId, run };
}

const exists = (file: string) => stat(file).then(() => true, () => false);

describe("Claude Agent SDK adapter: the SDK's own Claude Code process, offline", () => {
  it("claude agent: the SDK's Write waits for the operator, and the operator's edit is what gets written", async () => {
    const script: ModelTurn[] = [];
    const api = await messagesApi(script);
    const options = await offline(api.url);
    const file = path.join(options.cwd, "notes.txt");
    script.push({ toolUse: { id: "toolu_write_1", name: "Write", input: { file_path: file, content: "draft" } } }, { text: "Written." });

    const { sessionId, run } = await startRun("claude-coder", "Write the notes", options);
    const [approval] = await pending(sessionId, 1);
    expect(approval).toMatchObject({ tool: "Write", args: { file_path: file, content: "draft" }, externalId: "toolu_write_1", framework: "claude-agent", agent: "claude-coder" });
    expect(await exists(file)).toBe(false);
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "edit", args: { file_path: file, content: "final" } });

    const { result, requestId, approvals } = await run;
    expect(result).toMatchObject({ subtype: "success", result: "Written." });
    expect(approvals).toBe(1);
    expect(await readFile(file, "utf8")).toBe("final");
    expect(api.toolResults.get("toolu_write_1")?.is_error).toBeFalsy();
    expect(await operator.request.get.query({ requestId })).toMatchObject({ request: { status: "COMPLETED" } });
  });

  it("claude agent: an MCP tool the operator rejects does not run and the model reads why; the next call, approved, runs as proposed", async () => {
    const refunds: unknown[] = [];
    const shop = createSdkMcpServer({
      name: "shop",
      tools: [
        tool("refund", "Refunds an order", { order: z.string(), amount: z.number() }, async (args) => {
          refunds.push(args);
          return { content: [{ type: "text", text: "refunded" }] };
        }, { alwaysLoad: true }),
      ],
    });
    const api = await messagesApi([
      { toolUse: { id: "toolu_refund_1", name: "mcp__shop__refund", input: { order: "1001", amount: 100 } } },
      { toolUse: { id: "toolu_refund_2", name: "mcp__shop__refund", input: { order: "1001", amount: 50 } } },
      { text: "Refunded 50." },
    ]);
    const { sessionId, run } = await startRun("claude-support", "Refund order 1001", { ...(await offline(api.url)), mcpServers: { shop } });

    const [first] = await pending(sessionId, 1);
    expect(first).toMatchObject({ tool: "mcp__shop__refund", args: { order: "1001", amount: 100 }, externalId: "toolu_refund_1" });
    await operator.approval.decide.mutate({ approvalId: first!.approvalId, action: "reject", message: "at most 50 without a manager" });
    const [second] = await pending(sessionId, 1);
    expect(second).toMatchObject({ args: { order: "1001", amount: 50 }, externalId: "toolu_refund_2" });
    expect(refunds).toEqual([]);
    await operator.approval.decide.mutate({ approvalId: second!.approvalId, action: "approve" });

    const { result, approvals } = await run;
    expect(result.subtype).toBe("success");
    expect(approvals).toBe(2);
    expect(refunds).toEqual([{ order: "1001", amount: 50 }]);
    expect(api.toolResults.get("toolu_refund_1")).toMatchObject({ is_error: true });
    expect(JSON.stringify(api.toolResults.get("toolu_refund_1")!.content)).toContain("at most 50 without a manager");
    expect(JSON.stringify(api.toolResults.get("toolu_refund_2")!.content)).toContain("refunded");
  });

  it("claude agent: the SDK's AskUserQuestion reaches the operator as a question, and the model reads the answer", async () => {
    const question = "Which order should I refund?";
    const api = await messagesApi([
      {
        toolUse: {
          id: "toolu_question",
          name: "AskUserQuestion",
          input: { questions: [{ question, header: "Order", multiSelect: false, options: [{ label: "1001", description: "Paid twice" }, { label: "1002", description: "Late" }] }] },
        },
      },
      { text: "Refunding 1001." },
    ]);
    const { sessionId, run } = await startRun("claude-support", "Refund the right order", await offline(api.url));
    const [asked] = await pending(sessionId, 1);
    expect(asked).toMatchObject({ kind: "question", tool: "AskUserQuestion", externalId: "toolu_question" });
    expect(asked!.summary).toContain(question);
    await operator.approval.decide.mutate({ approvalId: asked!.approvalId, action: "respond", message: "1001, it was paid twice" });

    const { result } = await run;
    expect(result.subtype).toBe("success");
    expect(JSON.stringify(api.toolResults.get("toolu_question")!.content)).toContain("1001, it was paid twice");
  });

  it("claude agent: a canceled approval (its timeout) stops the run: the model is not called again, the call never runs, and the request fails as APPROVAL_CANCELED", async () => {
    const api = await messagesApi([{ toolUse: { id: "toolu_canceled", name: "Bash", input: { command: "make deploy" } } }, { text: "Deployed another way." }]);
    const tollgate = agentSdk(test.url);
    cleanups.push(() => tollgate.close());
    const { sessionId } = await tollgate.openSession({ title: "canceled deploy" });
    const options = await offline(api.url);
    const run = runWithApprovals((canUseTool) => query({ prompt: "Deploy", options: { ...options, canUseTool } }), { tollgate, sessionId, agent: "claude-coder", timeoutMs: 1_000, onTimeout: "cancel" });

    const error = await run.catch((thrown: unknown) => thrown);
    const [approval] = (await operator.approval.list.query({ sessionId })).items;
    expect(error).toBeInstanceOf(RunCanceledError);
    expect(error).toMatchObject({ approvalId: approval!.approvalId });
    expect(approval).toMatchObject({ status: "CANCELED", externalId: "toolu_canceled" });
    expect(api.calls).toEqual([{ toolResults: [] }]);
    expect(await operator.request.get.query({ requestId: approval!.requestId })).toMatchObject({ request: { status: "FAILED", error: { code: "APPROVAL_CANCELED" } } });
  });

  it("claude agent: a run stopped while an approval is pending fails its request, which ends the approval", async () => {
    const api = await messagesApi([{ toolUse: { id: "toolu_stopped", name: "Bash", input: { command: "make deploy" } } }]);
    const options = await offline(api.url);
    const { sessionId, run } = await startRun("claude-coder", "Deploy", options);
    const [approval] = await pending(sessionId, 1);
    options.abortController!.abort();

    await expect(run).rejects.toThrow();
    expect(await operator.approval.get.query({ approvalId: approval!.approvalId })).toMatchObject({ status: "CANCELED" });
    expect(await operator.request.get.query({ requestId: approval!.requestId })).toMatchObject({ request: { status: "FAILED" } });
  });
});
