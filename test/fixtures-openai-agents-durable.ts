// An OpenAI Agents run as its own process (`node --import tsx`) for the
// durable-run tests: one durable run (RUN_ID) of a refund agent on a model
// that asks for the refund until it has the tool's output; each run of the
// tool is a line in TOOL_LOG, so a test counts what ran across processes.
// TOOL_BLOCKS=1: the tool records its run, then never returns (to die inside it).
import { appendFileSync } from "node:fs";
import { Agent, setTracingDisabled, tool } from "@openai/agents";
import { assistantMessage, functionCall, modelResponder, ScriptedModel } from "@openai/agents/testing";
import { z } from "zod";
import { runWithApprovals } from "../sdk/src/adapters/openai-agents.ts";
import { createTollgate } from "../sdk/src/index.ts";

setTracingDisabled(true);
const env = process.env as Record<string, string>;
const tollgate = createTollgate({ url: env.TOLLGATE_URL!, apiKey: env.TOLLGATE_AGENT_KEY!, pollMs: 10_000 });

const refund = tool({
  name: "refund",
  description: "Refunds an order",
  parameters: z.object({ order: z.string(), amount: z.number() }),
  needsApproval: true,
  execute: async (args) => {
    appendFileSync(env.TOOL_LOG!, `${JSON.stringify({ args, pid: process.pid })}\n`);
    if (env.TOOL_BLOCKS === "1") await new Promise(() => undefined);
    return `refunded ${args.amount} on order ${args.order}`;
  },
});
// Whichever process asks it: the refund first, then what the tool said.
const turn = modelResponder(({ request }) => {
  const last = (request.input as { type?: string; output?: { text?: string } }[]).at(-1);
  return last?.type === "function_call_result" ? [assistantMessage(`done: ${last.output?.text ?? ""}`)] : [functionCall("refund", { order: "1001", amount: 40 }, { callId: "call_refund_1001" })];
});
const model = new ScriptedModel([turn, turn, turn, turn]);
const agent = new Agent({ name: "refunds", instructions: "Refund orders when asked.", model, tools: [refund] });

// Tells the test when this process has begun (or continued) its run.
const beginRun = tollgate.beginRun;
tollgate.beginRun = async (input) => {
  const run = await beginRun(input);
  console.log(`begun ${run.continued ? "continued" : "new"}`);
  return run;
};

try {
  const { result } = await runWithApprovals(agent, "Please refund order 1001", { tollgate, sessionId: env.SESSION_ID!, runId: env.RUN_ID! });
  console.log(`done ${JSON.stringify(result.finalOutput)}`);
  tollgate.close();
} catch (error) {
  console.log(`error ${(error as Error).name}: ${(error as Error).message}`);
  tollgate.close();
  process.exitCode = 3;
}
