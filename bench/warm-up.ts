// A new server's first thousands of calls cost more than the ones after: V8
// compiles the hot JavaScript and WebAssembly (Prisma's query compiler, and
// PGlite's PostgreSQL) with its optimizing tier only once a function has run
// often, one function at a time. request.begin + request.complete on a new
// server took 3.6 ms at first and settled at 2.0 (PostgreSQL) and 2.3 (PGlite)
// after about 2,000 pairs, ten seconds. So the per-call figures are measured
// after WARM_UP_SECONDS of the hot calls, as a running server answers them;
// the burst is measured on a server that has just started, on purpose.
import { createTollgate } from "../sdk/src/index.ts";
import { approveEachAsked, type BenchOperator } from "./approver.ts";
import type { BenchServer } from "./server.ts";

export const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 10);

/** Begins, asks (a person decides, on the operator's socket), and completes, one call after another, for `seconds`. */
export async function warmUp(server: BenchServer, operator: BenchOperator, seconds = WARM_UP_SECONDS): Promise<void> {
  const sdk = createTollgate({ url: server.url, apiKey: server.agentKey });
  const { sessionId } = await sdk.openSession({ title: "bench: warm-up" });
  const stopApproving = approveEachAsked(operator, sessionId);
  const deadline = performance.now() + seconds * 1000;
  try {
    for (let i = 0; performance.now() < deadline; i++) {
      const { requestId } = await sdk.begin({ sessionId, agent: "bench-warm-up" });
      const result = await sdk.ask({ requestId, tool: "send_email", args: { i } });
      if (result.status !== "APPROVED") throw new Error(`warm-up approval ${result.approvalId} ended ${result.status}`);
      await sdk.call("request.complete", { requestId });
    }
  } finally {
    stopApproving();
    sdk.close();
  }
}

/** Runs `once` again and again for `seconds`: the same warm-up for a figure measured in this process (LangGraph's). */
export async function warmUpInProcess(once: (i: number) => Promise<unknown>, seconds = WARM_UP_SECONDS): Promise<void> {
  const deadline = performance.now() + seconds * 1000;
  for (let i = 0; performance.now() < deadline; i++) await once(i);
}
