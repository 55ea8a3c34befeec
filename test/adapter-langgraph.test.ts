// The LangGraph adapter (@tollgate/sdk/langgraph) with LangGraph.js itself and
// LangChain v1's createAgent on its shipped fake model (no LLM): every interrupt
// becomes an approval decided here by an operator over HTTP, and the graph
// resumes with the decision in the shape its interrupt expects.
import { AIMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { Annotation, END, interrupt, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { createAgent, humanInTheLoopMiddleware, tool } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { runWithApprovals, RunCanceledError } from "../sdk/src/adapters/langgraph.ts";
import { agentSdk, type OperatorClient } from "./clients.ts";
import { useTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let operator: OperatorClient;
useTestServer((started, loggedIn) => {
  test = started;
  operator = loggedIn;
});

let threads = 0;
const thread = () => ({ configurable: { thread_id: `thread-${++threads}-${Date.now()}` } });

/** Starts a run of `graph` as `agent` in a new session; resolves when the graph ends. */
async function start(graph: Parameters<typeof runWithApprovals>[0], input: unknown, agent: string) {
  const tollgate = agentSdk(test.url);
  const { sessionId } = await tollgate.openSession({ title: agent });
  const run = runWithApprovals(graph, input, thread(), { tollgate, sessionId, agent });
  return { sessionId, run, close: () => tollgate.close() };
}

/** The pending approvals of a session once there are `count` of them, oldest first. */
async function pending(sessionId: string, count: number) {
  const read = async () => (await operator.approval.list.query({ sessionId, status: "PENDING" })).items;
  await expect.poll(async () => (await read()).length, { timeout: 20_000 }).toBe(count);
  return (await read()).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.tool.localeCompare(b.tool));
}

/** LangChain's send_email tool, keeping the arguments of each of its runs. */
function recordingSendEmail(schema: z.ZodObject<z.ZodRawShape> = z.object({ to: z.string() })) {
  const received: unknown[] = [];
  const sendEmail = tool(
    async (args) => {
      received.push(args);
      return "sent";
    },
    { name: "send_email", description: "Sends an email", schema },
  );
  return { received, sendEmail };
}

const ToolCallState = Annotation.Root({
  to: Annotation<string>,
  sent: Annotation<unknown[]>({ reducer: (all, more) => all.concat(more), default: () => [] }),
});

describe("LangGraph adapter", () => {
  it("langgraph: a raw interrupt({tool, args}) is an approval; the operator's edit arrives in the node, which runs once", async () => {
    const sent: unknown[] = [];
    const graph = new StateGraph(ToolCallState)
      .addNode("send", (state) => {
        const decision = interrupt({ tool: "send_email", args: { to: state.to }, description: "Email the **customer**" }) as { action: string; args: { to: string } };
        if (decision.action === "reject") return { sent: [] };
        sent.push(decision.args);
        return { sent: [decision.args] };
      })
      .addEdge(START, "send")
      .addEdge("send", END)
      .compile({ checkpointer: new MemorySaver() });

    const { sessionId, run, close } = await start(graph, { to: "all@example.com" }, "mailer-graph");
    const [approval] = await pending(sessionId, 1);
    expect(approval).toMatchObject({ tool: "send_email", args: { to: "all@example.com" }, summary: "Email the **customer**", framework: "langgraph" });
    expect(approval!.externalId).toEqual(expect.any(String));
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "edit", args: { to: "one@example.com" } });

    const { result, requestId, approvals } = await run;
    close();
    expect(approvals).toBe(1);
    expect(sent).toEqual([{ to: "one@example.com" }]);
    expect((result as { sent: unknown[] }).sent).toEqual([{ to: "one@example.com" }]);
    expect(await operator.request.get.query({ requestId })).toMatchObject({ request: { status: "COMPLETED" } });
  });

  it("langgraph: two interrupts pending at once are one group, decided one by one, and resumed together by interrupt id", async () => {
    const ran: string[] = [];
    const node = (tool: string) => () => {
      const decision = interrupt({ tool, args: { channel: tool } }) as { action: string; message?: string };
      ran.push(`${tool}:${decision.action}${decision.message ? `:${decision.message}` : ""}`);
      return {};
    };
    const graph = new StateGraph(ToolCallState)
      .addNode("email", node("send_email"))
      .addNode("sms", node("send_sms"))
      .addEdge(START, "email")
      .addEdge(START, "sms")
      .addEdge("email", END)
      .addEdge("sms", END)
      .compile({ checkpointer: new MemorySaver() });

    const { sessionId, run, close } = await start(graph, { to: "x" }, "fan-out-graph");
    const asked = await pending(sessionId, 2);
    expect(new Set(asked.map((item) => item.batch)).size).toBe(1);
    expect(asked[0]!.batch).toEqual(expect.any(String));
    const byTool = Object.fromEntries(asked.map((item) => [item.tool, item.approvalId]));
    await operator.approval.decide.mutate({ approvalId: byTool.send_email!, action: "approve" });
    // One decided, one waiting: the graph has not resumed.
    expect(ran).toEqual([]);
    await operator.approval.decide.mutate({ approvalId: byTool.send_sms!, action: "reject", message: "not by text" });
    await run;
    close();
    expect(ran.sort()).toEqual(["send_email:approve", "send_sms:reject:not by text"]);
  });

  it("langgraph: Agent Inbox's HumanInterrupt offers what its config allows, and an answer comes back as a response", async () => {
    const responses: unknown[] = [];
    const graph = new StateGraph(ToolCallState)
      .addNode("refund", () => {
        const [response] = interrupt([
          {
            action_request: { action: "refund", args: { amount: 100 } },
            config: { allow_accept: true, allow_edit: false, allow_respond: true, allow_ignore: true },
            description: "Refund order 1001?",
          },
        ]) as unknown[];
        responses.push(response);
        return {};
      })
      .addEdge(START, "refund")
      .addEdge("refund", END)
      .compile({ checkpointer: new MemorySaver() });

    const { sessionId, run, close } = await start(graph, { to: "x" }, "inbox-graph");
    const [approval] = await pending(sessionId, 1);
    expect(approval!.allow).toEqual(["approve", "reject", "respond"]);
    expect(approval).toMatchObject({ tool: "refund", args: { amount: 100 }, summary: "Refund order 1001?" });
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "respond", message: "at most 50, then ask again" });
    await run;
    close();
    expect(responses).toEqual([{ type: "response", args: "at most 50, then ask again" }]);
  });

  it("langchain v1: humanInTheLoopMiddleware's tool calls are approvals without a free-text answer, an edit reaches the tool, and what ran is recorded", async () => {
    const { received, sendEmail } = recordingSendEmail(z.object({ to: z.string(), body: z.string() }));
    const model = fakeModel()
      .respondWithTools([{ name: "send_email", args: { to: "all@example.com", body: "Your refund" }, id: "call_1" }])
      .respond(new AIMessage("Done."));
    const agent = createAgent({
      model,
      tools: [sendEmail],
      middleware: [humanInTheLoopMiddleware({ interruptOn: { send_email: { allowedDecisions: ["approve", "edit", "reject"] } } })],
      checkpointer: new MemorySaver(),
    });

    const { sessionId, run, close } = await start(agent as never, { messages: [{ role: "user", content: "tell them" }] }, "support-agent");
    const [approval] = await pending(sessionId, 1);
    expect(approval).toMatchObject({ tool: "send_email", args: { to: "all@example.com", body: "Your refund" } });
    expect(approval!.allow).toEqual(["approve", "reject", "edit"]);
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "edit", args: { to: "ada@example.com", body: "Your refund" } });
    await run;
    close();
    expect(received).toEqual([{ to: "ada@example.com", body: "Your refund" }]);
    // What ran, read from the middleware's tool message, is recorded on the approval.
    expect(await operator.approval.get.query({ approvalId: approval!.approvalId })).toMatchObject({
      executedArgs: { to: "ada@example.com", body: "Your refund" },
      executionResult: "sent",
      executionDeviated: false,
    });
  });

  it("langgraph: an Agent Inbox interrupt that takes neither ignore nor response can still be rejected: the run ends without resuming the graph, and the approval says so", async () => {
    const responses: unknown[] = [];
    const graph = new StateGraph(ToolCallState)
      .addNode("refund", () => {
        responses.push(interrupt({ action_request: { action: "refund", args: { amount: 100 } }, config: { allow_accept: true, allow_edit: false, allow_respond: false, allow_ignore: false } }));
        return {};
      })
      .addEdge(START, "refund")
      .addEdge("refund", END)
      .compile({ checkpointer: new MemorySaver() });

    const { sessionId, run, close } = await start(graph, { to: "x" }, "strict-inbox-graph");
    const [approval] = await pending(sessionId, 1);
    expect(approval!.allow).toEqual(["approve", "reject"]);
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "reject", message: "no refunds today" });
    const { endedByRejection, requestId } = await run;
    close();
    expect(endedByRejection).toBe(approval!.approvalId);
    expect(responses).toEqual([]);
    expect(await operator.approval.get.query({ approvalId: approval!.approvalId })).toMatchObject({
      status: "REJECTED",
      notRunReason: "rejected: the interrupt allows neither ignore nor response, so the run ended without resuming the graph",
    });
    expect(await operator.request.get.query({ requestId })).toMatchObject({ request: { status: "COMPLETED" } });
  });

  it("langchain v1: when one call of a turn is rejected, the middleware runs none, and each approved call of the turn says it was not run", async () => {
    const { received, sendEmail } = recordingSendEmail();
    const model = fakeModel()
      .respondWithTools([
        { name: "send_email", args: { to: "ada@example.com" }, id: "call_1" },
        { name: "send_email", args: { to: "all@example.com" }, id: "call_2" },
      ])
      .respond(new AIMessage("Done."));
    const agent = createAgent({
      model,
      tools: [sendEmail],
      middleware: [humanInTheLoopMiddleware({ interruptOn: { send_email: { allowedDecisions: ["approve", "reject"] } } })],
      checkpointer: new MemorySaver(),
    });

    const { sessionId, run, close } = await start(agent as never, { messages: [{ role: "user", content: "tell them" }] }, "two-mails-agent");
    const [first, second] = await pending(sessionId, 2);
    const [toAda, toAll] = (first!.args as { to: string }).to === "ada@example.com" ? [first!, second!] : [second!, first!];
    await operator.approval.decide.mutate({ approvalId: toAda.approvalId, action: "approve" });
    await operator.approval.decide.mutate({ approvalId: toAll.approvalId, action: "reject", message: "not to everyone" });
    await run;
    close();
    expect(received).toEqual([]);
    expect(await operator.approval.get.query({ approvalId: toAda.approvalId })).toMatchObject({ status: "APPROVED", notRunReason: "not run: another call of the same turn was rejected" });
    expect(await operator.approval.get.query({ approvalId: toAll.approvalId })).toMatchObject({ status: "REJECTED", notRunReason: null });
  });

  it("langgraph: an interrupt inside a subgraph is asked on the subgraph's request, under the run's request", async () => {
    const billing = new StateGraph(ToolCallState)
      .addNode("charge", () => {
        const decision = interrupt({ tool: "charge_card", args: { amount: 20 } }) as { action: string };
        return { sent: [decision.action] };
      })
      .addEdge(START, "charge")
      .addEdge("charge", END)
      .compile();
    const graph = new StateGraph(ToolCallState)
      .addNode("billing", billing)
      .addEdge(START, "billing")
      .addEdge("billing", END)
      .compile({ checkpointer: new MemorySaver() });

    const { sessionId, run, close } = await start(graph, { to: "x" }, "orders-graph");
    const [approval] = await pending(sessionId, 1);
    expect(approval).toMatchObject({ tool: "charge_card", agent: "billing" });
    const tree = await operator.task.tree.query({ sessionId });
    expect(tree.roots.map((root) => [root.agent, root.status, root.children.map((child) => [child.agent, child.status])])).toEqual([["orders-graph", "PAUSED", [["billing", "PAUSED"]]]]);
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });
    const { result } = await run;
    close();
    expect((result as { sent: unknown[] }).sent).toEqual(["approve"]);
    const after = await operator.task.tree.query({ sessionId });
    expect(after.roots.map((root) => [root.agent, root.status, root.children.map((child) => [child.agent, child.status])])).toEqual([["orders-graph", "COMPLETED", [["billing", "COMPLETED"]]]]);
  });

  it("langgraph: interrupt(\"a question\") asks a person, and the node gets the answer as text", async () => {
    const answers: unknown[] = [];
    const graph = new StateGraph(ToolCallState)
      .addNode("ask", () => {
        answers.push(interrupt("Which order should I refund?"));
        return {};
      })
      .addEdge(START, "ask")
      .addEdge("ask", END)
      .compile({ checkpointer: new MemorySaver() });

    const { sessionId, run, close } = await start(graph, { to: "x" }, "asking-graph");
    const [approval] = await pending(sessionId, 1);
    expect(approval).toMatchObject({ kind: "question", summary: "Which order should I refund?", allow: ["respond", "reject"] });
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "respond", message: "order 1001" });
    await run;
    close();
    expect(answers).toEqual(["order 1001"]);
  });

  it("langgraph: two interrupts inside one subgraph are asked on one request of it", async () => {
    const node = (tool: string) => () => {
      interrupt({ tool, args: {} });
      return {};
    };
    const billing = new StateGraph(ToolCallState)
      .addNode("charge", node("charge_card"))
      .addNode("invoice", node("send_invoice"))
      .addEdge(START, "charge")
      .addEdge(START, "invoice")
      .addEdge("charge", END)
      .addEdge("invoice", END)
      .compile();
    const graph = new StateGraph(ToolCallState).addNode("billing", billing).addEdge(START, "billing").addEdge("billing", END).compile({ checkpointer: new MemorySaver() });

    const { sessionId, run, close } = await start(graph, { to: "x" }, "parallel-billing-graph");
    const asked = await pending(sessionId, 2);
    expect(new Set(asked.map((item) => item.requestId)).size).toBe(1);
    for (const item of asked) await operator.approval.decide.mutate({ approvalId: item.approvalId, action: "approve" });
    await run;
    close();
    const tree = await operator.task.tree.query({ sessionId });
    expect(tree.roots[0]!.children.map((child) => [child.agent, child.status, child.requests.length])).toEqual([["billing", "COMPLETED", 1]]);
  });

  it("langgraph: when the approval is canceled (the task was stopped), the graph does not go on", async () => {
    const ran: string[] = [];
    const graph = new StateGraph(ToolCallState)
      .addNode("delete", () => {
        interrupt({ tool: "delete_user", args: { id: 7 } });
        ran.push("delete_user");
        return {};
      })
      .addEdge(START, "delete")
      .addEdge("delete", END)
      .compile({ checkpointer: new MemorySaver() });

    const { sessionId, run, close } = await start(graph, { to: "x" }, "stopped-graph");
    const [approval] = await pending(sessionId, 1);
    await operator.task.cancel.mutate({ taskId: approval!.taskId, reason: "stopped by the operator" });
    await expect(run).rejects.toBeInstanceOf(RunCanceledError);
    close();
    expect(ran).toEqual([]);
  });

  it("langchain v1: a canceled approval (its timeout) stops the run: the graph is not resumed, the model is not called again, and the request fails as APPROVAL_CANCELED", async () => {
    const { received, sendEmail } = recordingSendEmail();
    const model = fakeModel()
      .respondWithTools([{ name: "send_email", args: { to: "all@example.com" }, id: "call_1" }])
      .respond(new AIMessage("Sent another way."));
    const agent = createAgent({
      model,
      tools: [sendEmail],
      middleware: [humanInTheLoopMiddleware({ interruptOn: { send_email: { allowedDecisions: ["approve", "reject"] } } })],
      checkpointer: new MemorySaver(),
    });
    const tollgate = agentSdk(test.url);
    const { sessionId } = await tollgate.openSession({ title: "canceled mail" });
    await operator.policy.create.mutate({ name: "mails of this session cancel on silence", match: { sessionId }, outcome: "require", timeoutMs: 1_000, onTimeout: "cancel" });

    const run = runWithApprovals(agent as never, { messages: [{ role: "user", content: "tell them" }] }, thread(), { tollgate, sessionId, agent: "canceled-mail-agent" });
    const error = await run.catch((thrown: unknown) => thrown);
    tollgate.close();
    const [approval] = (await operator.approval.list.query({ sessionId })).items;
    expect(error).toBeInstanceOf(RunCanceledError);
    expect(error).toMatchObject({ approvalId: approval!.approvalId });
    expect(approval).toMatchObject({ status: "CANCELED", tool: "send_email" });
    expect(model.callCount).toBe(1);
    expect(received).toEqual([]);
    expect(await operator.request.get.query({ requestId: approval!.requestId })).toMatchObject({ request: { status: "FAILED", error: { code: "APPROVAL_CANCELED" } } });
  });

  it("langgraph: a description longer than the server takes is cut, marked as cut, rather than failing the run", async () => {
    const graph = new StateGraph(ToolCallState)
      .addNode("send", () => {
        interrupt({ tool: "send_email", args: {}, description: "x".repeat(30_000) });
        return {};
      })
      .addEdge(START, "send")
      .addEdge("send", END)
      .compile({ checkpointer: new MemorySaver() });
    const { sessionId, run, close } = await start(graph, { to: "x" }, "wordy-graph");
    const [approval] = await pending(sessionId, 1);
    expect(approval!.summary).toHaveLength(20_000);
    expect(approval!.summary!.endsWith("…")).toBe(true);
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });
    await run;
    close();
  });
});
