#!/usr/bin/env node
// A test agent service, run as its own process: plays the reference scenario's
// follow-on (client -> O1 -> A2, A2's tool needs approval) over plain JSON/HTTP
// with the agent key, waits for the decision on a long-poll, runs the tool with
// the arguments it was given, and reports each step as one JSON line on stdout.
// It completes its requests only when told "finish" on stdin, so a test can watch
// the tree while it is RUNNING again.
import { createInterface } from "node:readline";

const url = process.env.TOLLGATE_URL;
const key = process.env.TOLLGATE_AGENT_KEY;
const tool = process.env.AGENT_TOOL ?? "send_email";
const args = JSON.parse(process.env.AGENT_ARGS ?? '{"to":"ops@example.com","subject":"hello"}');
const title = process.env.AGENT_SESSION_TITLE ?? `Agent run ${Date.now()}`;

const say = (event, data = {}) => process.stdout.write(`${JSON.stringify({ event, ...data })}\n`);

async function call(path, input, method = "POST") {
  const target = method === "GET" ? `${url}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}` : `${url}/api/trpc/${path}`;
  const response = await fetch(target, {
    method,
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: method === "GET" ? undefined : JSON.stringify(input),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(`${path} failed (${response.status}): ${JSON.stringify(body.error?.message ?? body)}`);
  return body.result.data;
}

const lines = createInterface({ input: process.stdin });
const finish = new Promise((resolve) => lines.on("line", (line) => line.trim() === "finish" && resolve()));

try {
  const { sessionId } = await call("session.open", { title });
  // First invocation: O1 calls A1, both complete.
  const first = await call("request.begin", { sessionId, agent: "O1", kind: "orchestrator", input: { ask: "plan the trip" } });
  const a1 = await call("request.begin", { sessionId, agent: "A1", parentRequestId: first.requestId, input: { step: "search" } });
  await call("request.complete", { requestId: a1.requestId, output: { found: 3 } });
  await call("request.complete", { requestId: first.requestId, output: { answer: "planned" } });
  // Follow-on on the same O1 task: O1 calls A2, whose tool needs a human.
  const followOn = await call("request.begin", { sessionId, agent: "O1", kind: "orchestrator", taskId: first.taskId, input: { ask: "book it" } });
  const a2 = await call("request.begin", { sessionId, agent: "A2", parentRequestId: followOn.requestId, input: { step: "book" } });
  await call("request.trace", { requestId: a2.requestId, events: [{ type: "tool_call", name: tool, data: args }] });
  const approval = await call("approval.request", { requestId: a2.requestId, tool, args, reason: `A2 wants to run ${tool} for the booking` });
  say("approval-requested", { sessionId, approvalId: approval.approvalId, o1TaskId: first.taskId, a2TaskId: a2.taskId, a2RequestId: a2.requestId });

  let result = approval;
  while (result.status === "PENDING") result = await call("approval.await", { approvalId: approval.approvalId, timeoutMs: 2_000 }, "GET");
  say("decided", { status: result.status, decision: result.decision ?? null });

  if (result.status === "APPROVED") {
    const executedArgs = result.decision?.action === "edit" ? result.decision.args : args;
    await call("approval.reportExecution", { approvalId: approval.approvalId, executedArgs, result: { ok: true } });
    await call("request.trace", { requestId: a2.requestId, events: [{ type: "tool_result", name: tool, data: { ok: true } }] });
    say("executed", { executedArgs });
  }
  await finish;
  await call("request.complete", { requestId: a2.requestId, output: { status: result.status } });
  await call("request.complete", { requestId: followOn.requestId, output: { booked: result.status === "APPROVED" } });
  say("completed");
  process.exit(0);
} catch (error) {
  say("error", { message: String(error?.message ?? error) });
  process.exit(1);
}
