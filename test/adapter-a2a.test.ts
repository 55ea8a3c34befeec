// The A2A adapter (@tollgate/sdk/a2a) with a2a-js's own client and server: a
// remote agent (DefaultRequestHandler, InMemoryTaskStore, a scripted
// AgentExecutor) reached through a2a-js's Client over JSON-RPC, the HTTP hop
// replaced by a fetch that hands each request to the server's JSON-RPC handler.
// Its input-required questions are answered or declined here by an operator
// over HTTP.
import { randomUUID } from "node:crypto";
import { Role, TaskState, type Message, type Part, type SendMessageRequest, type Task } from "@a2a-js/sdk";
import { ClientFactory, JsonRpcTransportFactory, type Client } from "@a2a-js/sdk/client";
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, JsonRpcTransportHandler, ServerCallContext, type AgentExecutor } from "@a2a-js/sdk/server";
import { describe, expect, it } from "vitest";
import { sendWithHumanInput } from "../sdk/src/adapters/a2a.ts";
import { agentSdk, type OperatorClient } from "./clients.ts";
import { useTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let operator: OperatorClient;
useTestServer((started, loggedIn) => {
  test = started;
  operator = loggedIn;
});

const CARD = {
  name: "refund-agent",
  description: "Refunds orders",
  supportedInterfaces: [{ url: "http://refund-agent.invalid/a2a", protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" }],
  provider: undefined,
  version: "1.0.0",
  capabilities: { streaming: false, pushNotifications: false, extensions: [] },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [],
  signatures: [],
};

const textPart = (value: string): Part => ({ content: { $case: "text", value }, mediaType: "text/plain", filename: "", metadata: undefined });
const textOf = (parts: Part[]) => parts.map((part) => (part.content?.$case === "text" ? part.content.value : "")).join("");

function message(role: Role, text: string, ids: { taskId?: string; contextId?: string } = {}): Message {
  return { messageId: randomUUID(), taskId: ids.taskId ?? "", contextId: ids.contextId ?? "", role, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

const userRequest = (text: string): SendMessageRequest => ({ tenant: "", message: message(Role.ROLE_USER, text), configuration: undefined, metadata: undefined });

/**
 * A remote agent that asks `questions` one at a time (each turn stops in
 * input-required), then completes with `finish(answers)` as its artifact.
 * `seen` records what it was sent, per task.
 */
function scriptedAgent(questions: string[], finish: (answers: string[]) => string) {
  const seen = { tasks: [] as string[], answers: new Map<string, string[]>(), canceled: [] as string[] };
  const contexts = new Map<string, string>();
  const executor: AgentExecutor = {
    async execute(context, bus) {
      const { taskId, contextId } = context;
      if (!seen.tasks.includes(taskId)) seen.tasks.push(taskId);
      contexts.set(taskId, contextId);
      const answers = context.task ? [...(seen.answers.get(taskId) ?? []), textOf(context.userMessage.parts)] : [];
      seen.answers.set(taskId, answers);
      const status = (state: TaskState, said?: Message) => AgentEvent.statusUpdate({ taskId, contextId, status: { state, message: said, timestamp: new Date().toISOString() }, metadata: undefined });
      bus.publish(AgentEvent.task(context.task ?? { id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: undefined }, artifacts: [], history: [context.userMessage], metadata: undefined }));
      bus.publish(status(TaskState.TASK_STATE_WORKING));
      const next = questions[answers.length];
      if (next !== undefined) {
        bus.publish(status(TaskState.TASK_STATE_INPUT_REQUIRED, message(Role.ROLE_AGENT, next, { taskId, contextId })));
      } else {
        const artifact = { artifactId: "result", name: "result", description: "", parts: [textPart(finish(answers))], metadata: undefined, extensions: [] };
        bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: false, lastChunk: true, metadata: undefined }));
        bus.publish(status(TaskState.TASK_STATE_COMPLETED));
      }
      bus.finished();
    },
    async cancelTask(taskId, bus) {
      seen.canceled.push(taskId);
      const contextId = contexts.get(taskId) ?? "";
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() }, metadata: undefined }));
      bus.finished();
    },
  };
  return { executor, seen };
}

/** a2a-js's Client for an agent served by `executor`, over JSON-RPC; the HTTP hop is a function call. */
async function clientOf(executor: AgentExecutor): Promise<Client> {
  const jsonRpc = new JsonRpcTransportHandler(new DefaultRequestHandler(CARD, new InMemoryTaskStore(), executor));
  const fetchImpl: typeof fetch = async (_url, init) => {
    const requestedVersion = new Headers(init?.headers).get("A2A-Version") ?? undefined;
    return Response.json(await jsonRpc.handle(JSON.parse(String(init?.body)), new ServerCallContext({ requestedVersion })));
  };
  return new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })] }).createFromAgentCard(CARD);
}

/** An orchestrator's request in a new session, and the remote agent's work under it. */
async function orchestrate(executor: AgentExecutor, text: string) {
  const tollgate = agentSdk(test.url);
  const { sessionId } = await tollgate.openSession({ title: "a2a" });
  const orchestrator = await tollgate.begin({ sessionId, agent: "orchestrator", kind: "orchestrator" });
  const client = await clientOf(executor);
  const run = sendWithHumanInput(client, userRequest(text), { tollgate, sessionId, agent: "refund-agent", parentRequestId: orchestrator.requestId });
  return { sessionId, orchestrator, run, close: () => tollgate.close() };
}

const pendingNow = async (sessionId: string) => (await operator.approval.list.query({ sessionId, status: "PENDING" })).items;

/** The pending approvals of a session once there are `count` of them. */
async function pending(sessionId: string, count: number) {
  await expect.poll(async () => (await pendingNow(sessionId)).length, { timeout: 20_000 }).toBe(count);
  return pendingNow(sessionId);
}

async function treeOf(sessionId: string) {
  const tree = await operator.task.tree.query({ sessionId });
  return tree.roots.map((root) => [root.agent, root.status, root.children.map((child) => [child.agent, child.framework, child.status])]);
}

const artifactText = (task: Task) => task.artifacts.map((artifact) => textOf(artifact.parts)).join("");

describe("A2A adapter", () => {
  it("a2a: a task in input-required is a question in the inbox and the tree; the answer continues the same task to completion", async () => {
    const { executor, seen } = scriptedAgent(["Which order?"], ([order]) => `Refunded ${order}`);
    const { sessionId, orchestrator, run, close } = await orchestrate(executor, "Refund the customer's last order");

    const [question] = await pending(sessionId, 1);
    const [taskId] = seen.tasks;
    expect(question).toMatchObject({ kind: "question", tool: "a2a_input", summary: "Which order?", externalId: taskId, agent: "refund-agent", framework: "a2a", allow: ["respond", "reject"] });
    expect(question!.args).toMatchObject({ taskId });
    expect(await treeOf(sessionId)).toEqual([["orchestrator", "PAUSED", [["refund-agent", "a2a", "PAUSED"]]]]);
    await operator.approval.decide.mutate({ approvalId: question!.approvalId, action: "respond", message: "order 1001" });

    const { result, requestId, questions } = await run;
    close();
    const task = result as Task;
    expect(task.id).toBe(taskId);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(artifactText(task)).toBe("Refunded order 1001");
    // One task, and the answer reached it as the user's next message.
    expect(seen.tasks).toEqual([taskId]);
    expect(seen.answers.get(taskId!)).toEqual(["order 1001"]);
    expect(task.history.at(-1)).toMatchObject({ role: Role.ROLE_USER, taskId, contextId: task.contextId });
    expect(questions).toBe(1);
    expect(await operator.request.get.query({ requestId })).toMatchObject({ request: { status: "COMPLETED", parentRequestId: orchestrator.requestId } });
    await orchestrator.complete();
    expect(await treeOf(sessionId)).toEqual([["orchestrator", "COMPLETED", [["refund-agent", "a2a", "COMPLETED"]]]]);
  });

  it("a2a: a declined question cancels the A2A task, and the remote agent's request fails saying why", async () => {
    const { executor, seen } = scriptedAgent(["Which order?"], ([order]) => `Refunded ${order}`);
    const { sessionId, run, close } = await orchestrate(executor, "Refund the customer's last order");

    const [question] = await pending(sessionId, 1);
    await operator.approval.decide.mutate({ approvalId: question!.approvalId, action: "reject", message: "not without the customer's consent" });

    const { result, requestId } = await run;
    close();
    const task = result as Task;
    expect(task.id).toBe(seen.tasks[0]);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(seen.canceled).toEqual([task.id]);
    // The refusal never reached the agent as an answer.
    expect(seen.answers.get(task.id)).toEqual([]);
    const { request } = await operator.request.get.query({ requestId });
    expect(request).toMatchObject({ status: "FAILED", error: { code: "A2A_INPUT_DECLINED" } });
    expect((request.error as { message: string }).message).toContain("declined: not without the customer's consent");
    expect(await treeOf(sessionId)).toEqual([["orchestrator", "RUNNING", [["refund-agent", "a2a", "FAILED"]]]]);
  });

  it("a2a: a task that asks again is asked again, each question under its own externalId, and all answers reach the task", async () => {
    const { executor, seen } = scriptedAgent(["Which order?", "Full or partial refund?"], ([order, amount]) => `Refunded ${order} (${amount})`);
    const { sessionId, run, close } = await orchestrate(executor, "Refund the customer's last order");

    const [first] = await pending(sessionId, 1);
    const [taskId] = seen.tasks;
    await operator.approval.decide.mutate({ approvalId: first!.approvalId, action: "respond", message: "order 1001" });
    await expect.poll(async () => (await pendingNow(sessionId)).map((item) => item.summary), { timeout: 20_000 }).toEqual(["Full or partial refund?"]);
    const [second] = await pendingNow(sessionId);
    expect(second).toMatchObject({ summary: "Full or partial refund?", externalId: `${taskId}:2` });
    expect(first!.externalId).toBe(taskId);
    await operator.approval.decide.mutate({ approvalId: second!.approvalId, action: "respond", message: "full" });

    const { result, questions } = await run;
    close();
    expect(questions).toBe(2);
    expect((result as Task).id).toBe(taskId);
    expect(artifactText(result as Task)).toBe("Refunded order 1001 (full)");
    expect(seen.tasks).toEqual([taskId]);
  });
});
