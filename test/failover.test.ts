// Two node processes on one PostgreSQL database, hearing each other through
// LISTEN/NOTIFY. One is killed with SIGKILL while it holds a pending approval
// whose timeout is near and a decision whose webhook its receiver has not yet
// accepted: the other node applies the timeout and delivers the webhook, each
// exactly once.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentSdk, operatorClient } from "./clients.ts";
import { createEmptyPostgresDatabase, TEST_TARGET } from "./harness.ts";
import { serverProcess, type ServerProcess } from "./process.ts";
import { describeWith, needsPostgres } from "./requires.ts";

const onPostgres = TEST_TARGET === "postgres";
let nodes: ServerProcess[] = [];
let dropDatabase: (() => Promise<void>) | undefined;
let receiver: Server;
let receiverUrl: string;
let accepting = false;
const accepted: string[] = [];

beforeAll(async () => {
  if (!onPostgres) return;
  const database = await createEmptyPostgresDatabase();
  dropDatabase = database.drop;
  const env = { TOLLGATE_SECRET: `failover-test-secret-${"y".repeat(32)}` };
  nodes = [await serverProcess({ databaseUrl: database.url, env }), await serverProcess({ databaseUrl: database.url, env })];
  // One after the other: the first applies the migrations and creates the first admin.
  for (const node of nodes) await node.start();
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      if (!accepting) return void res.writeHead(503).end();
      accepted.push(JSON.parse(body).approvalId);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/resume`;
});
afterAll(async () => {
  if (!onPostgres) return;
  await Promise.all(nodes.map((node) => node.cleanup()));
  await dropDatabase?.();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

describeWith(needsPostgres())("a node dies", () => {
  it("multi-node: after node A is SIGKILLed, node B applies A's due timeout and delivers A's webhook, each exactly once", async () => {
    const [a, b] = nodes as [ServerProcess, ServerProcess];
    const onA = agentSdk(a.url);
    const { sessionId } = await onA.openSession({ title: "failover" });
    const begun = await onA.begin({ sessionId, agent: "A2", resumeUrl: receiverUrl });
    const expiring = await onA.call("approval.request", { requestId: begun.requestId, tool: "rm", args: {}, timeoutMs: 2_000 });
    const decided = await onA.call("approval.request", { requestId: begun.requestId, tool: "pay", args: { amount: 5 } });
    await (await operatorClient(a.url)).approval.decide.mutate({ approvalId: decided.approvalId, action: "approve" });
    onA.close();

    expect(await a.kill("SIGKILL")).toBe(null);
    accepting = true;

    // Nobody asks node B about it: B's own timers and sweeps must end it.
    const operatorOnB = await operatorClient(b.url);
    await expect
      .poll(async () => (await operatorOnB.approval.get.query({ approvalId: expiring.approvalId })).status, { timeout: 20_000 })
      .toBe("EXPIRED");
    await expect.poll(() => accepted.filter((id) => id === decided.approvalId).length, { timeout: 30_000 }).toBe(1);

    const log = await operatorOnB.audit.list.query({ subjectId: expiring.approvalId });
    expect(log.items.filter((entry) => entry.action === "approval.expired")).toHaveLength(1);
    // Each webhook acknowledged once: the expiry's and the decision's, no second copies.
    await expect.poll(() => accepted.filter((id) => id === expiring.approvalId).length, { timeout: 30_000 }).toBe(1);
    expect(accepted.filter((id) => id === decided.approvalId)).toHaveLength(1);
    expect((await operatorOnB.audit.verify.query()).ok).toBe(true);
  });
});
