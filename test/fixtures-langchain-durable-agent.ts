// A LangChain v1 createAgent agent (humanInTheLoopMiddleware, the framework's
// fake model, a SQLite checkpointer) run as its own process (`node --import tsx`)
// by the durable-run tests: one durable run (RUN_ID, its thread id) whose tool,
// wrapped in runOnce, records every run as a line in TOOL_LOG with the
// idempotency key it was given, so a test counts what ran across processes.
// TOOL_BLOCKS=1: the tool records its run, then never returns (to die inside it).
import { appendFileSync } from "node:fs";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createAgent, humanInTheLoopMiddleware, tool } from "langchain";
import { z } from "zod";
import { runOnce, runWithApprovals } from "../sdk/src/adapters/langgraph.ts";
import { createTollgate } from "../sdk/src/index.ts";

const env = process.env as Record<string, string>;
const tollgate = createTollgate({ url: env.TOLLGATE_URL!, apiKey: env.TOLLGATE_AGENT_KEY!, pollMs: 10_000 });

const sendEmail = runOnce(
  tool(
    async (args, config) => {
      const idempotencyKey = (config as { configurable?: { idempotencyKey?: string } }).configurable?.idempotencyKey;
      appendFileSync(env.TOOL_LOG!, `${JSON.stringify({ args, idempotencyKey, pid: process.pid })}\n`);
      if (env.TOOL_BLOCKS === "1") await new Promise(() => undefined);
      return `sent to ${args.to}`;
    },
    { name: "send_email", description: "Sends an email", schema: z.object({ to: z.string() }) },
  ),
);

// Whichever process asks it: the email first, then what the tool said.
const turn = (messages: BaseMessage[]) => {
  const last = messages.at(-1);
  return last?.getType() === "tool"
    ? new AIMessage(`done: ${String(last.content)}`)
    : new AIMessage({ content: "", tool_calls: [{ name: "send_email", args: { to: "ada@example.com" }, id: "call_email_1", type: "tool_call" }] });
};
const model = fakeModel().respond(turn).respond(turn).respond(turn).respond(turn);
const agent = createAgent({
  model,
  tools: [sendEmail],
  middleware: [humanInTheLoopMiddleware({ interruptOn: { send_email: { allowedDecisions: ["approve", "edit", "reject"] } } })],
  checkpointer: SqliteSaver.fromConnString(env.CHECKPOINTS!),
});

// Tells the test when this process has begun (or continued) its run.
const beginRun = tollgate.beginRun;
tollgate.beginRun = async (input) => {
  const run = await beginRun(input);
  console.log(`begun ${run.continued ? "continued" : "new"}`);
  return run;
};

try {
  const { result } = await runWithApprovals<{ messages: BaseMessage[] }>(
    agent as never,
    { messages: [{ role: "user", content: "Tell Ada her refund went through" }] },
    { configurable: { thread_id: env.RUN_ID! } },
    { tollgate, sessionId: env.SESSION_ID!, agent: "durable-support" },
  );
  console.log(`done ${String(result.messages.at(-1)?.content)}`);
  tollgate.close();
} catch (error) {
  console.log(`error ${(error as Error).name}: ${(error as Error).message}`);
  tollgate.close();
  process.exitCode = 3;
}
