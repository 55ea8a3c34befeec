// A burst: 100 agents start at once, each beginning a request and asking for
// approval in the same instant; an operator decides each as its push arrives.
// Measures, from the start, when the first and the last agent had its answer.
import { createTollgate } from "../sdk/src/index.ts";
import { approveEachAsked, type BenchOperator } from "./approver.ts";
import type { BenchServer } from "./server.ts";

export interface BurstResult {
  firstMs: number;
  lastMs: number;
}

export async function burst(server: BenchServer, operator: BenchOperator, agents: number): Promise<BurstResult> {
  const sdk = createTollgate({ url: server.url, apiKey: server.agentKey });
  const { sessionId } = await sdk.openSession({ title: "bench: burst" });
  const stopApproving = approveEachAsked(operator, sessionId);
  const started = performance.now();
  const answeredAt: number[] = [];
  try {
    await Promise.all(
      Array.from({ length: agents }, async (_, index) => {
        const request = await sdk.begin({ sessionId, agent: `burst-${index}` });
        const result = await sdk.ask({ requestId: request.requestId, tool: "send_email", args: { index } });
        if (result.status !== "APPROVED") throw new Error(`burst agent ${index} ended ${result.status}`);
        answeredAt.push(performance.now() - started);
      }),
    );
  } finally {
    stopApproving();
    sdk.close();
  }
  return { firstMs: Math.min(...answeredAt), lastMs: Math.max(...answeredAt) };
}
