// The refund agent of the OpenAI Agents adapter's tests, and, run as a script
// (`node --import tsx`), a process that runs it until it pauses on Tollgate,
// prints what a resuming process needs as one JSON line, and exits.
import { pathToFileURL } from "node:url";
import { Agent, setTracingDisabled, tool, type Model } from "@openai/agents";
import { functionCall, ScriptedModel } from "@openai/agents/testing";
import { z } from "zod";
import { runUntilPause } from "../sdk/src/adapters/openai-agents.ts";
import { createTollgate } from "../sdk/src/index.ts";

export interface Refund {
  order: string;
  amount: number;
}

/** The same agent in every process: a `refund` tool that needs approval (of every call, or of those above `approvalAbove`), recording what it refunded. */
export function refundAgent(model: Model, refunded: Refund[], approvalAbove?: number) {
  const refund = tool({
    name: "refund",
    description: "Refunds an order",
    parameters: z.object({ order: z.string(), amount: z.number() }),
    needsApproval: approvalAbove === undefined ? true : async (_context, { amount }) => amount > approvalAbove,
    execute: async (args) => {
      refunded.push(args);
      return `refunded ${args.amount} on order ${args.order}`;
    },
  });
  return new Agent({ name: "refunds", instructions: "Refund orders when asked.", model, tools: [refund] });
}

async function pauseAndExit() {
  setTracingDisabled(true);
  const tollgate = createTollgate({ url: process.env.TOLLGATE_URL!, apiKey: process.env.TOLLGATE_AGENT_KEY! });
  const { sessionId } = await tollgate.openSession({ title: "refund paused by a process that exits" });
  const model = new ScriptedModel([[functionCall("refund", { order: "1001", amount: 100 }, { callId: "call_refund_1001" })]]);
  const refunded: Refund[] = [];
  const paused = await runUntilPause(refundAgent(model, refunded), "Refund order 1001", { tollgate, sessionId, agentName: "refund-run" });
  tollgate.close();
  if (refunded.length > 0) throw new Error("the pausing process ran the tool");
  console.log(JSON.stringify({ sessionId, ...paused }));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await pauseAndExit();
