// A LangGraph agent on a SQLite checkpointer, run as its own process
// (`node --import tsx`) by the durable-run tests: it runs one durable run
// (RUN_ID) and records every run of its tool as a line in TOOL_LOG, so a test
// that kills it and starts it again counts what ran across processes.
// TOOL_BLOCKS=1: the tool records its run, then never returns (to die inside it).
import { appendFileSync } from "node:fs";
import { Annotation, END, interrupt, START, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { runApproved, runWithApprovals, type ToolDecision } from "../sdk/src/adapters/langgraph.ts";
import { createTollgate } from "../sdk/src/index.ts";

const env = process.env as Record<string, string>;
const tollgate = createTollgate({ url: env.TOLLGATE_URL!, apiKey: env.TOLLGATE_AGENT_KEY!, pollMs: 10_000 });

const State = Annotation.Root({ to: Annotation<string>, outcome: Annotation<string> });
const graph = new StateGraph(State)
  .addNode("send", async (state) => {
    const decision = interrupt({ tool: "send_email", args: { to: state.to } }) as ToolDecision;
    const run = await runApproved(tollgate, decision, async (args, { idempotencyKey }) => {
      appendFileSync(env.TOOL_LOG!, `${JSON.stringify({ args, idempotencyKey, pid: process.pid })}\n`);
      if (env.TOOL_BLOCKS === "1") await new Promise(() => undefined);
      return { sent: true };
    });
    return { outcome: run.ran ? "sent" : run.reason };
  })
  .addEdge(START, "send")
  .addEdge("send", END)
  .compile({ checkpointer: SqliteSaver.fromConnString(env.CHECKPOINTS!) });

// Tells the test when this process asks (or asks again) about an interrupt.
const ask = tollgate.ask;
tollgate.ask = (input) => {
  console.log(`asking ${input.externalId}`);
  return ask(input);
};

try {
  const { result } = await runWithApprovals(graph, { to: "ada@example.com" }, { configurable: { thread_id: env.RUN_ID! } }, {
    tollgate,
    sessionId: env.SESSION_ID!,
    agent: "durable-mailer",
  });
  console.log(`done ${JSON.stringify(result)}`);
  tollgate.close();
} catch (error) {
  console.log(`error ${(error as Error).name}: ${(error as Error).message}`);
  tollgate.close();
  process.exitCode = 3;
}
