// Invariant 7: nothing is kept only in memory. A server killed with SIGKILL
// while approvals are pending comes back with every approval, decision,
// timeout and undelivered webhook intact, and delivers them.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook } from "../sdk/src/index.ts";
import { agentSdk, operatorClient } from "./clients.ts";
import { AGENT_KEY, TEST_TARGET } from "./harness.ts";
import { serverProcess, type ServerProcess } from "./process.ts";

let receiver: Server;
let receiverUrl: string;
let receiverUp = false;
const delivered: { body: string; signature?: string }[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      if (!receiverUp) return void res.writeHead(503).end();
      delivered.push({ body, signature: req.headers["tollgate-signature"] as string | undefined });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/resume`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

describe("crash safety", () => {
  it("a port in use: the server says so and exits, rather than lingering without serving", async () => {
    const blocker = createServer((_req, res) => res.writeHead(503).end());
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const blocked = await serverProcess({ port: (blocker.address() as AddressInfo).port });
    try {
      await expect(blocked.start()).rejects.toThrow(/server exited early \(1\)[\s\S]*is in use \(EADDRINUSE\)/);
    } finally {
      await blocked.cleanup();
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  // On the embedded database, also with the database on a thread of its own (TOLLGATE_EMBEDDED_THREAD=worker).
  const threads = TEST_TARGET === "postgres" ? ["main"] : ["main", "worker"];
  it.each(threads)("crash: after kill -9 and restart, pending approvals, decisions, timeouts and webhooks all survive (embedded database's thread: %s)", async (thread) => {
    const proc = await serverProcess({ env: { TOLLGATE_EMBEDDED_THREAD: thread } });
    try {
      await crashAndRestart(proc);
      expect(proc.output().includes("on a thread of its own"), proc.output()).toBe(thread === "worker");
    } finally {
      await proc.cleanup();
    }
  });
});

/** Approvals pending, decided and about to expire; the server killed with SIGKILL; all of it there after the restart. */
async function crashAndRestart(proc: ServerProcess) {
  receiverUp = false;
  await proc.start();
  const sdk = agentSdk(proc.url);
  let operator = await operatorClient(proc.url);
  const { sessionId } = await sdk.openSession({ title: "crash" });
  const root = await sdk.begin({ sessionId, agent: "O1", kind: "orchestrator" });
  const child = await sdk.begin({ sessionId, agent: "A2", parentRequestId: root.requestId, resumeUrl: receiverUrl });

  const stillPending = await sdk.call("approval.request", { requestId: child.requestId, tool: "pay", args: { amount: 10 } });
  const decidedBeforeCrash = await sdk.call("approval.request", { requestId: child.requestId, tool: "email", args: { to: "x" } });
  const expiresDuringDowntime = await sdk.call("approval.request", { requestId: child.requestId, tool: "rm", args: {}, timeoutMs: 1_500 });
  await operator.approval.decide.mutate({ approvalId: decidedBeforeCrash.approvalId, action: "approve" });

  expect(await proc.kill("SIGKILL")).toBe(null);
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  receiverUp = true;
  await proc.start();
  operator = await operatorClient(proc.url);

  // The decision made before the crash is still recorded, and still reaches the agent.
  expect(await sdk.call("approval.await", { approvalId: decidedBeforeCrash.approvalId, timeoutMs: 0 })).toMatchObject({ status: "APPROVED" });
  const deadline = Date.now() + 15_000;
  while (!delivered.some((d) => d.body.includes(decidedBeforeCrash.approvalId)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const webhook = delivered.find((d) => d.body.includes(decidedBeforeCrash.approvalId));
  expect(webhook, proc.output()).toBeDefined();
  expect(verifyWebhook(webhook!.body, webhook!.signature, AGENT_KEY)).toBe(true);

  // The timeout that passed while the server was down is applied on restart.
  const expired = await sdk.call("approval.await", { approvalId: expiresDuringDowntime.approvalId, timeoutMs: 10_000 });
  expect(expired).toMatchObject({ status: "EXPIRED", decision: { action: "reject" } });

  // The pending approval is still pending, still pauses the chain, and can be decided.
  const tree = await operator.task.tree.query({ sessionId });
  expect(tree.roots[0]!.status).toBe("PAUSED");
  const waiting = sdk.call("approval.await", { approvalId: stillPending.approvalId, timeoutMs: 20_000 });
  await operator.approval.decide.mutate({ approvalId: stillPending.approvalId, action: "approve" });
  expect(await waiting).toMatchObject({ status: "APPROVED" });
  expect((await operator.task.tree.query({ sessionId })).roots[0]!.status).toBe("RUNNING");
  expect((await operator.audit.verify.query()).ok).toBe(true);
}
