// A burst: 100 agents start at once, each beginning a request and asking for
// approval in the same instant; an operator decides each as its push arrives.
// Measures, from the start, when the first and the last agent had its answer.
import { createTollgate } from "../sdk/src/index.ts";
import type { BenchServer } from "./server.ts";
import type { Socket } from "socket.io-client";
import type { createTRPCClient } from "@trpc/client";
import type { AppRouter } from "../server/api/router.ts";

export interface BurstResult {
  firstMs: number;
  lastMs: number;
}

export async function burst(server: BenchServer, operator: { client: ReturnType<typeof createTRPCClient<AppRouter>>; socket: Socket }, agents: number): Promise<BurstResult> {
  const sdk = createTollgate({ url: server.url, apiKey: server.agentKey });
  const { sessionId } = await sdk.openSession({ title: "bench: burst" });
  const onRequested = (event: { approvalId: string; sessionId: string }) => {
    if (event.sessionId !== sessionId) return;
    void operator.client.approval.decide.mutate({ approvalId: event.approvalId, action: "approve" }).catch(() => undefined);
  };
  operator.socket.on("approval:requested", onRequested);
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
    operator.socket.off("approval:requested", onRequested);
    sdk.close();
  }
  return { firstMs: Math.min(...answeredAt), lastMs: Math.max(...answeredAt) };
}
