// A Vercel AI SDK run (AI_VERSION 7 or 6) as its own process (`node --import tsx`)
// for the durable-run tests: one durable run (RUN_ID) whose model asks for a
// refund until it has the tool's result; each run of the tool is a line in
// TOOL_LOG, so a test counts what ran across processes.
// TOOL_BLOCKS=1: the tool records its run, then never returns (to die inside it).
import { appendFileSync } from "node:fs";
import { generateText, jsonSchema, tool, type JSONSchema7, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import * as v6 from "ai-v6";
import { MockLanguageModelV3 } from "ai-v6/test";
import { runWithApprovals } from "../sdk/src/adapters/ai-sdk.ts";
import { createTollgate } from "../sdk/src/index.ts";

const env = process.env as Record<string, string>;
const tollgate = createTollgate({ url: env.TOLLGATE_URL!, apiKey: env.TOLLGATE_AGENT_KEY!, pollMs: 10_000 });

interface Refund {
  order: number;
  amount: number;
}
const schema: JSONSchema7 = { type: "object", properties: { order: { type: "number" }, amount: { type: "number" } }, required: ["order", "amount"] };
const execute = async (input: Refund) => {
  appendFileSync(env.TOOL_LOG!, `${JSON.stringify({ args: input, pid: process.pid })}\n`);
  if (env.TOOL_BLOCKS === "1") await new Promise(() => undefined);
  return `refunded ${input.amount} EUR for order ${input.order}`;
};

// Whichever process asks it: the refund first, then a word once it has the result.
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const respond = async ({ prompt }: { prompt: { role: string; content: unknown }[] }) => {
  const hasResult = prompt.some((message) => message.role === "tool" && Array.isArray(message.content) && message.content.some((part: { type: string }) => part.type === "tool-result"));
  return hasResult
    ? { content: [{ type: "text" as const, text: "Refunded." }], finishReason: { unified: "stop" as const, raw: "stop" }, usage, warnings: [] }
    : {
        content: [{ type: "tool-call" as const, toolCallId: "call-42", toolName: "refund", input: JSON.stringify({ order: 42, amount: 30 }) }],
        finishReason: { unified: "tool-calls" as const, raw: "tool_calls" },
        usage,
        warnings: [],
      };
};

const userAsks: ModelMessage[] = [{ role: "user", content: "Refund order 42" }];
const generate =
  env.AI_VERSION === "6"
    ? (() => {
        const refund = v6.tool({ description: "Refunds an order", inputSchema: v6.jsonSchema<Refund>(schema), needsApproval: true, execute });
        const model = new MockLanguageModelV3({ doGenerate: respond as never });
        return (messages: v6.ModelMessage[]) => v6.generateText({ model, tools: { refund }, messages });
      })()
    : (() => {
        const refund = tool({ description: "Refunds an order", inputSchema: jsonSchema<Refund>(schema), execute });
        const model = new MockLanguageModelV4({ doGenerate: respond as never });
        return (messages: ModelMessage[]) => generateText({ model, tools: { refund }, toolApproval: { refund: { type: "user-approval" } }, messages });
      })();

// Tells the test when this process has begun (or continued) its run.
const beginRun = tollgate.beginRun;
tollgate.beginRun = async (input) => {
  const run = await beginRun(input);
  console.log(`begun ${run.continued ? "continued" : "new"}`);
  return run;
};

try {
  const { result } = await runWithApprovals(generate as unknown as (messages: ModelMessage[]) => Promise<{ text: string; responseMessages: ModelMessage[] }>, userAsks, {
    tollgate,
    sessionId: env.SESSION_ID!,
    agent: "refund-bot",
    runId: env.RUN_ID!,
  });
  console.log(`done ${result.text}`);
  tollgate.close();
} catch (error) {
  console.log(`error ${(error as Error).name}: ${(error as Error).message}`);
  tollgate.close();
  process.exitCode = 3;
}
