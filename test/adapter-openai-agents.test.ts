// The OpenAI Agents adapter (@tollgate/sdk/openai-agents) with @openai/agents
// on its shipped ScriptedModel (no LLM, no key): every call a run pauses on is
// an approval decided here by an operator over HTTP, and the run resumes with
// the decision, in the same process or in another one after the first exited.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Agent, setTracingDisabled, tool, type AgentInputItem } from "@openai/agents";
import { assistantMessage, functionCall, modelResponder, ScriptedModel } from "@openai/agents/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AlreadyResumedError, resumeFromTollgate, runUntilPause, runWithApprovals, RunCanceledError } from "../sdk/src/adapters/openai-agents.ts";
import { agentSdk, type OperatorClient } from "./clients.ts";
import { refundAgent, type Refund } from "./fixtures-openai-agents-pause.ts";
import { AGENT_KEY } from "./harness.ts";
import { nodeScript } from "./node-script.ts";
import { useTestServer, type TestServer } from "./server.ts";

// Nothing may try to export traces: there is no network and no key.
setTracingDisabled(true);

let test: TestServer;
let operator: OperatorClient;
useTestServer((started, loggedIn) => {
  test = started;
  operator = loggedIn;
});

const FIXTURE = fileURLToPath(new URL("./fixtures-openai-agents-pause.ts", import.meta.url));
const REPOSITORY = fileURLToPath(new URL("..", import.meta.url));

/** The pending approvals of a session once there are `count` of them, by externalId. */
async function pending(sessionId: string, count: number) {
  const read = async () => (await operator.approval.list.query({ sessionId, status: "PENDING" })).items;
  await expect.poll(async () => (await read()).length, { timeout: 20_000 }).toBe(count);
  return (await read()).sort((a, b) => (a.externalId ?? "").localeCompare(b.externalId ?? ""));
}

async function openSession(title: string) {
  const tollgate = agentSdk(test.url);
  const { sessionId } = await tollgate.openSession({ title });
  return { tollgate, sessionId };
}

/** The session's tasks as [agent, status, children]. */
async function tree(sessionId: string) {
  type Node = { agent: string; status: string; children: Node[] };
  const shape = (node: Node): unknown[] => [node.agent, node.status, node.children.map(shape)];
  return ((await operator.task.tree.query({ sessionId })).roots as Node[]).map(shape);
}

/** What the model read of each tool call's result, by callId. */
function toolResults(input: string | AgentInputItem[]): string[] {
  if (typeof input === "string") return [];
  return input.flatMap((item) => {
    if (item.type !== "function_call_result") return [];
    const output = item.output as string | { text?: string };
    return [`${item.callId}: ${typeof output === "string" ? output : (output.text ?? JSON.stringify(output))}`];
  });
}

/** A model turn that answers with what the tool calls returned, so a test reads what reached the model. */
const reportToolResults = () => modelResponder(({ request }) => [assistantMessage(toolResults(request.input).join("; "))]);

/** Runs the refund agent in a child process until it pauses; that process asks Tollgate and exits. */
async function pauseInAnotherProcess() {
  const { stdout } = await promisify(execFile)(process.execPath, [nodeScript(FIXTURE)], {
    cwd: REPOSITORY,
    env: { ...process.env, TOLLGATE_URL: test.url, TOLLGATE_AGENT_KEY: AGENT_KEY },
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as { sessionId: string; status: string; requestId: string; pauseRequestId: string; approvalIds: string[] };
}

describe("OpenAI Agents adapter", () => {
  it("openai-agents: a needsApproval call is an approval offering approve and reject only; approved, the tool runs once and the run completes", async () => {
    const refunded: Refund[] = [];
    const model = new ScriptedModel([[functionCall("refund", { order: "1001", amount: 100 }, { callId: "call_refund_1001" })], reportToolResults()]);
    const { tollgate, sessionId } = await openSession("one refund");
    const run = runWithApprovals(refundAgent(model, refunded), "Refund order 1001", {
      tollgate,
      sessionId,
      summary: (call) => `Refund **${(call.args as { amount: number }).amount}** on order 1001`,
    });

    const [approval] = await pending(sessionId, 1);
    expect(approval).toMatchObject({
      tool: "refund",
      args: { order: "1001", amount: 100 },
      externalId: "call_refund_1001",
      allow: ["approve", "reject"],
      framework: "openai-agents",
      agent: "refunds",
      summary: "Refund **100** on order 1001",
    });
    expect(await tree(sessionId)).toEqual([["refunds", "PAUSED", [["refunds", "PAUSED", []]]]]);
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });

    const { result, requestId, approvals } = await run;
    tollgate.close();
    expect(approvals).toBe(1);
    expect(refunded).toEqual([{ order: "1001", amount: 100 }]);
    expect(result.finalOutput).toBe("call_refund_1001: refunded 100 on order 1001");
    expect(await operator.request.get.query({ requestId })).toMatchObject({ request: { status: "COMPLETED" } });
    expect(await tree(sessionId)).toEqual([["refunds", "COMPLETED", [["refunds", "COMPLETED", []]]]]);
    const [ran] = (await operator.approval.list.query({ sessionId })).items;
    expect(ran).toMatchObject({ executedArgs: { order: "1001", amount: 100 }, executionResult: "refunded 100 on order 1001" });
  });

  it("openai-agents: calls paused in one turn are one batch resumed together; a rejection's message reaches the model as the call's result", async () => {
    const refunded: Refund[] = [];
    const model = new ScriptedModel([
      [
        functionCall("refund", { order: "1001", amount: 100 }, { callId: "call_a" }),
        functionCall("refund", { order: "1002", amount: 70 }, { callId: "call_b" }),
      ],
      reportToolResults(),
    ]);
    const { tollgate, sessionId } = await openSession("two refunds");
    const run = runWithApprovals(refundAgent(model, refunded), "Refund orders 1001 and 1002", { tollgate, sessionId });

    const [first, second] = await pending(sessionId, 2);
    expect([first!.externalId, second!.externalId]).toEqual(["call_a", "call_b"]);
    expect(first!.batch).toEqual(expect.any(String));
    expect(second!.batch).toBe(first!.batch);
    await operator.approval.decide.mutate({ approvalId: first!.approvalId, action: "approve" });
    // One decided, one waiting: the run has not resumed.
    expect(refunded).toEqual([]);
    await operator.approval.decide.mutate({ approvalId: second!.approvalId, action: "reject", message: "Order 1002 was refunded last week" });

    const { result } = await run;
    tollgate.close();
    expect(refunded).toEqual([{ order: "1001", amount: 100 }]);
    expect(result.finalOutput).toBe("call_a: refunded 100 on order 1001; call_b: Order 1002 was refunded last week");
  });

  it("openai-agents: a needsApproval function asks only about the calls it flags, and the others run once", async () => {
    const refunded: Refund[] = [];
    const model = new ScriptedModel([
      [
        functionCall("refund", { order: "1001", amount: 100 }, { callId: "call_big" }),
        functionCall("refund", { order: "1002", amount: 5 }, { callId: "call_small" }),
      ],
      reportToolResults(),
    ]);
    const { tollgate, sessionId } = await openSession("refunds above 50 need a person");
    const run = runWithApprovals(refundAgent(model, refunded, 50), "Refund orders 1001 and 1002", { tollgate, sessionId });

    const [approval] = await pending(sessionId, 1);
    expect(approval).toMatchObject({ externalId: "call_big", args: { order: "1001", amount: 100 } });
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });
    await run;
    tollgate.close();
    expect(refunded.sort((a, b) => a.order.localeCompare(b.order))).toEqual([
      { order: "1001", amount: 100 },
      { order: "1002", amount: 5 },
    ]);
    expect((await operator.approval.list.query({ sessionId })).items).toHaveLength(1);
  });

  it("openai-agents: a run paused by a process that exited resumes in another from Tollgate alone; approved, the tool runs once, and only one resume runs it", async () => {
    const paused = await pauseInAnotherProcess();
    expect(paused.status).toBe("paused");
    const [approval] = await pending(paused.sessionId, 1);
    expect(approval).toMatchObject({ requestId: paused.pauseRequestId, externalId: "call_refund_1001", args: { order: "1001", amount: 100 } });
    expect(await tree(paused.sessionId)).toEqual([["refund-run", "PAUSED", [["refunds", "PAUSED", []]]]]);
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });

    // This process never saw the run: the agent is defined again, with the model's next turn.
    const refunded: Refund[] = [];
    const model = new ScriptedModel([reportToolResults()]);
    const tollgate = agentSdk(test.url);
    const { result, requestId } = await resumeFromTollgate(refundAgent(model, refunded), paused.pauseRequestId, { tollgate });
    expect(requestId).toBe(paused.requestId);
    expect(refunded).toEqual([{ order: "1001", amount: 100 }]);
    expect(model.firstCall!.request.input).toEqual(expect.arrayContaining([expect.objectContaining({ role: "user", content: "Refund order 1001" })]));
    expect(result.finalOutput).toBe("call_refund_1001: refunded 100 on order 1001");
    expect(await tree(paused.sessionId)).toEqual([["refund-run", "COMPLETED", [["refunds", "COMPLETED", []]]]]);

    // A second resume of the same pause (a retry, another replica) runs nothing.
    await expect(resumeFromTollgate(refundAgent(new ScriptedModel([reportToolResults()]), refunded), paused.pauseRequestId, { tollgate })).rejects.toThrow(AlreadyResumedError);
    tollgate.close();
    expect(refunded).toHaveLength(1);
  });

  it("openai-agents: a rejection decided while no process waits reaches the model of the run resumed in a new process, whose next pause is asked under the same run", async () => {
    const paused = await pauseInAnotherProcess();
    const [approval] = await pending(paused.sessionId, 1);
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "reject", message: "Order 1001 is disputed: refund order 1002 instead" });

    const refunded: Refund[] = [];
    const model = new ScriptedModel([[functionCall("refund", { order: "1002", amount: 100 }, { callId: "call_refund_1002" })], reportToolResults()]);
    const tollgate = agentSdk(test.url);
    const resumed = resumeFromTollgate(refundAgent(model, refunded), paused.pauseRequestId, { tollgate });

    const [next] = await pending(paused.sessionId, 1);
    expect(next).toMatchObject({ externalId: "call_refund_1002", args: { order: "1002", amount: 100 } });
    expect(next!.requestId).not.toBe(paused.pauseRequestId);
    expect(toolResults(model.firstCall!.request.input)).toEqual(["call_refund_1001: Order 1001 is disputed: refund order 1002 instead"]);
    await operator.approval.decide.mutate({ approvalId: next!.approvalId, action: "approve" });

    const { result, approvals } = await resumed;
    tollgate.close();
    expect(approvals).toBe(1);
    expect(refunded).toEqual([{ order: "1002", amount: 100 }]);
    expect(result.finalOutput).toBe("call_refund_1001: Order 1001 is disputed: refund order 1002 instead; call_refund_1002: refunded 100 on order 1002");
    expect(await tree(paused.sessionId)).toEqual([["refund-run", "COMPLETED", [["refunds", "COMPLETED", []], ["refunds", "COMPLETED", []]]]]);
  });

  it("openai-agents: runUntilPause returns without waiting, and of two processes resuming the pause at once only one runs the tool", async () => {
    const { tollgate, sessionId } = await openSession("two replicas resume");
    const pausing = new ScriptedModel([[functionCall("refund", { order: "1001", amount: 100 }, { callId: "call_refund_1001" })]]);
    const paused = await runUntilPause(refundAgent(pausing, []), "Refund order 1001", { tollgate, sessionId });
    if (paused.status !== "paused") throw new Error("the run did not pause");
    const [approval] = await pending(sessionId, 1);
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });

    const refunded: Refund[] = [];
    const replicas = [agentSdk(test.url), agentSdk(test.url)];
    const outcomes = await Promise.allSettled(
      replicas.map((replica) => resumeFromTollgate(refundAgent(new ScriptedModel([reportToolResults()]), refunded), paused.pauseRequestId, { tollgate: replica })),
    );
    for (const replica of [tollgate, ...replicas]) replica.close();
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(outcomes.find((outcome) => outcome.status === "rejected")).toMatchObject({ reason: expect.any(AlreadyResumedError) });
    expect(refunded).toEqual([{ order: "1001", amount: 100 }]);
  });

  it("openai-agents: a task canceled while its run waits stops the run, and the paused call never runs", async () => {
    const refunded: Refund[] = [];
    const model = new ScriptedModel([[functionCall("refund", { order: "1001", amount: 100 }, { callId: "call_refund_1001" })], reportToolResults()]);
    const { tollgate, sessionId } = await openSession("canceled refund");
    const run = runWithApprovals(refundAgent(model, refunded), "Refund order 1001", { tollgate, sessionId });
    const outcome = run.catch((error: unknown) => error);

    await pending(sessionId, 1);
    const [root] = (await operator.task.tree.query({ sessionId })).roots;
    await operator.task.cancel.mutate({ taskId: root!.taskId, reason: "customer withdrew" });
    expect(await outcome).toBeInstanceOf(RunCanceledError);
    tollgate.close();
    expect(refunded).toEqual([]);
    expect(model.remainingSteps).toBe(1);
  });

  it("openai-agents: the app's run context is not stored with the paused run; the process that resumes passes its own", async () => {
    const seen: unknown[] = [];
    const refund = tool({
      name: "refund",
      description: "Refunds an order",
      parameters: z.object({ order: z.string() }),
      needsApproval: true,
      execute: async ({ order }, context) => {
        seen.push((context?.context as { paymentsToken?: string }).paymentsToken);
        return `refunded ${order}`;
      },
    });
    const model = () => new ScriptedModel([[functionCall("refund", { order: "1001" }, { callId: "call_ctx" })], reportToolResults()]);
    const agent = (scripted: ScriptedModel) => new Agent({ name: "refunds-with-context", instructions: "Refund.", model: scripted, tools: [refund] });
    const { tollgate, sessionId } = await openSession("context");
    const paused = await runUntilPause(agent(model()), "Refund order 1001", { tollgate, sessionId, runOptions: { context: { paymentsToken: "pay_secret_123" } } });
    expect(paused.status).toBe("paused");
    const pauseRequestId = (paused as { pauseRequestId: string }).pauseRequestId;
    const stored = await tollgate.call("request.load", { requestId: pauseRequestId });
    expect(stored.resumeToken).not.toContain("pay_secret_123");

    const [approval] = await pending(sessionId, 1);
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });
    await resumeFromTollgate(agent(model()), pauseRequestId, { tollgate, context: { paymentsToken: "pay_secret_123" } });
    tollgate.close();
    expect(seen).toEqual(["pay_secret_123"]);
  });
});
