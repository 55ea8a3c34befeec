// The Python client (clients/python, standard library only) against a real
// server: its unit tests, then the reference scenario's agent side in Python
// while an operator decides here, through the same HTTP API the console uses.
import { spawn, spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import type { OperatorClient } from "./clients.ts";
import { AGENT_KEY } from "./harness.ts";
import { useTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let admin: OperatorClient;
useTestServer((server, client) => {
  test = server;
  admin = client;
});

function runPython(args: string[]): { done: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const child = spawn("python3", args, { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return { done: new Promise((resolve) => child.on("exit", (code) => resolve({ code, stdout, stderr }))) };
}

describe("Python client", () => {
  it("its unit tests pass (webhook signatures, the kept-alive transport)", () => {
    const result = spawnSync("python3", ["-m", "unittest", "discover", "-s", "clients/python/tests"], { encoding: "utf8" });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Ran \d+ tests[\s\S]*OK/);
  });

  it("the reference agents in Python pause on send_email, run it once with the operator's edit, verify the webhook, and complete the chain", async () => {
    const python = runPython(["clients/python/examples/reference_agents.py", test.url, AGENT_KEY]);

    const pending = async () => (await admin.approval.list.query({ status: "PENDING", tool: "send_email", agent: "email-agent" })).items;
    await expect.poll(async () => (await pending()).length, { timeout: 20_000 }).toBe(1);
    const [approval] = await pending();
    const edited = { to: "ada@example.com", subject: "Your refund", body: "We refunded 100 EUR." };
    await admin.approval.decide.mutate({ approvalId: approval!.approvalId, action: "edit", args: edited });

    const { code, stdout, stderr } = await python.done;
    expect(code, stderr).toBe(0);
    const report = JSON.parse(stdout.trim().split("\n").at(-1)!);
    expect(report).toMatchObject({ outcome: "sent", sent: [edited], webhooks: [{ verified: true, approvalId: approval!.approvalId }] });

    const tree = await admin.task.tree.query({ sessionId: report.sessionId });
    // The session stays open for more work; its three tasks and their requests have all completed.
    const statuses = (JSON.stringify(tree).match(/"status":"[A-Z]+"/g) ?? []).map((match) => match.slice(10, -1));
    expect(statuses.filter((status) => status === "COMPLETED").length).toBeGreaterThanOrEqual(6);
    expect(new Set(statuses)).toEqual(new Set(["OPEN", "COMPLETED"]));
    const decided = await admin.approval.get.query({ approvalId: approval!.approvalId });
    expect(decided).toMatchObject({ status: "APPROVED", approvedArgs: edited, executedArgs: edited, executionResult: { messageId: "msg-1" }, executionDeviated: false });
  });
});
