// The server's memory after many approvals: 100 agents ask and wait (each
// decision pushed on the SDK's held connection) until `total` approvals have
// been asked for and decided. The server's resident set size is read from its
// own /metrics twice: as the load ends (garbage not yet collected included),
// and after 60 quiet seconds, once V8 has collected and given back what the
// load left: what it keeps. V8's memory reducer does that when a process has
// gone idle, about 30 s after the load here (--trace-gc), so a wait of 30 s
// read the heap before it some runs and after it others.
import { createTollgate } from "../sdk/src/index.ts";
import { approveEachAsked, type BenchOperator } from "./approver.ts";
import type { BenchServer } from "./server.ts";

export interface MemoryResult {
  approvals: number;
  seconds: number;
  /** As the load ends. */
  residentUnderLoadMb: number;
  /** After QUIET_MS without calls. */
  residentMb: number;
  heapUsedMb: number;
}

const QUIET_MS = Number(process.env.BENCH_MEMORY_QUIET_MS ?? 60_000);

async function processMetric(url: string, name: string): Promise<number> {
  const text = await fetch(`${url}/metrics`).then((response) => response.text());
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${name} `));
  if (!line) throw new Error(`/metrics has no ${name}`);
  return Number(line.split(" ").at(-1));
}

export async function memoryAfterApprovals(
  server: BenchServer,
  operator: BenchOperator,
  total: number,
  agents = 100,
): Promise<MemoryResult> {
  const sdk = createTollgate({ url: server.url, apiKey: server.agentKey });
  const { sessionId } = await sdk.openSession({ title: "bench: memory" });
  const stopApproving = approveEachAsked(operator, sessionId);
  let asked = 0;
  const started = performance.now();
  try {
    await Promise.all(
      Array.from({ length: agents }, async (_, index) => {
        const request = await sdk.begin({ sessionId, agent: `memory-${index}` });
        while (asked < total) {
          asked += 1;
          const result = await sdk.ask({ requestId: request.requestId, tool: "send_email", args: { index, asked } });
          if (result.status !== "APPROVED") throw new Error(`approval ${result.approvalId} ended ${result.status}`);
        }
      }),
    );
  } finally {
    stopApproving();
    sdk.close();
  }
  const seconds = (performance.now() - started) / 1000;
  const residentUnderLoadMb = (await processMetric(server.url, "tollgate_process_process_resident_memory_bytes")) / 2 ** 20;
  await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
  return {
    approvals: asked,
    seconds,
    residentUnderLoadMb,
    residentMb: (await processMetric(server.url, "tollgate_process_process_resident_memory_bytes")) / 2 ** 20,
    heapUsedMb: (await processMetric(server.url, "tollgate_process_nodejs_heap_size_used_bytes")) / 2 ** 20,
  };
}
