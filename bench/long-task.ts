// The round trip on one task as the task's own requests grow: what a task's
// status costs once the task has a long history (docs/performance.md, "Task
// statuses are counts").
//
//   npx tsx bench/long-task.ts                                   # the embedded database
//   LONG_TASK_DATABASE=postgres://.../db npx tsx bench/long-task.ts   # emptied first
//   LONG_TASK_SIZES=0,1500,4500 LONG_TASK_BUILD=/tmp/before npx tsx bench/long-task.ts
//
// One session and one task; before each measurement the task is grown to the
// given number of requests (begun and completed, ten at a time), and then 100
// round trips are timed in it: a follow-on request begun, an ask the operator's
// socket hears and approves, the agent receiving the decision, the request
// completed. Prints the p50 at each size.
import { createTollgate } from "../sdk/src/index.ts";
import { connectOperator } from "./approver.ts";
import { startBenchServer } from "./server.ts";
import { percentile } from "./stats.ts";

const SIZES = (process.env.LONG_TASK_SIZES ?? "0,1500,4500").split(",").map(Number);
const ROUND_TRIPS = 100;
const WARM_UP = 30;
// Longer than the server's round of planner statistics (server/http.ts), so
// each size is measured as a running server would see it.
const STATISTICS_SETTLE_MS = 11_000;

const server = await startBenchServer(process.env.LONG_TASK_DATABASE || undefined, { build: process.env.LONG_TASK_BUILD });
const { url, agentKey } = server;
const { client: operator, socket } = await connectOperator(server);
const sdk = createTollgate({ url, apiKey: agentKey });
const { sessionId } = await sdk.openSession({ title: "long task" });
const first = await sdk.begin({ sessionId, agent: "worker" });
const taskId = first.taskId;
await sdk.call("request.complete", { requestId: first.requestId, output: {} });
let requestsInTask = 1;

async function beginAndComplete() {
  const { requestId } = await sdk.call("request.begin", { sessionId, agent: "worker", taskId });
  await sdk.call("request.complete", { requestId, output: {} });
}

async function roundTrip(i: number) {
  const started = performance.now();
  const { requestId } = await sdk.call("request.begin", { sessionId, agent: "worker", taskId });
  const heard = new Promise<{ approvalId: string }>((resolve) => socket.once("approval:requested", resolve));
  const answered = sdk.ask({ requestId, tool: "send_email", args: { i } });
  await operator.approval.decide.mutate({ approvalId: (await heard).approvalId, action: "approve" });
  if ((await answered).status !== "APPROVED") throw new Error(`round trip ${i} was not approved`);
  await sdk.call("request.complete", { requestId, output: {} });
  return performance.now() - started;
}

try {
  for (const size of SIZES) {
    while (requestsInTask < size) {
      await Promise.all(Array.from({ length: 10 }, beginAndComplete));
      requestsInTask += 10;
    }
    await new Promise((resolve) => setTimeout(resolve, STATISTICS_SETTLE_MS));
    const samples: number[] = [];
    for (let i = 0; i < WARM_UP + ROUND_TRIPS; i++) {
      const took = await roundTrip(i);
      if (i >= WARM_UP) samples.push(took);
    }
    requestsInTask += WARM_UP + ROUND_TRIPS;
    console.log(`${size} requests in the task: round trip p50 ${percentile(samples, 50).toFixed(2)} ms`);
  }
} finally {
  socket.close();
  sdk.close();
  await server.stop();
}
