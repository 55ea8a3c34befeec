// Durable runs with the Vercel AI SDK, v7 and v6: a run in its own process is
// killed (SIGKILL) while its approval waits, or before the decision, and started
// again with the same runId: it continues from the messages it kept in Tollgate
// (so the call keeps its approvalId), asks nothing again, runs the tool once and
// records what ran; one process drives a run at a time.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { durableRuns } from "./agent-process.ts";
import type { OperatorClient } from "./clients.ts";
import { AGENT_KEY } from "./harness.ts";
import { useTestServer, type TestServer } from "./server.ts";

const AGENT = fileURLToPath(new URL("./fixtures-ai-sdk-durable.ts", import.meta.url));

let test: TestServer;
let operator: OperatorClient;
useTestServer((started, loggedIn) => {
  test = started;
  operator = loggedIn;
});

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "tollgate-durable-ai-sdk-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const newRun = durableRuns(AGENT, () => ({ url: test.url, agentKey: AGENT_KEY, dir, operator }));

describe("durable runs: AI SDK", () => {
  it("ai-sdk v7 durable: killed while waiting and started again, the run continues on the same approval (same approvalId), the tool runs once and what ran is recorded", async () => {
    const run = await newRun();
    const first = run.start({ AI_VERSION: "7" });
    const approval = await run.asked();
    await first.kill();

    const second = run.start({ AI_VERSION: "7" });
    await second.line(/^begun continued/);
    await operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "approve" });
    expect(await second.line(/^done /)).toBe("done Refunded.");

    const approvals = await run.approvals();
    expect(approvals).toHaveLength(1);
    expect(approvals[0]).toMatchObject({ status: "APPROVED", externalId: approval.externalId, executedArgs: { order: 42, amount: 30 } });
    expect((await run.toolRuns()).map((ran) => ran.args)).toEqual([{ order: 42, amount: 30 }]);
  });

  it("ai-sdk v6 durable: decided while no process waits, the decision is applied when the run is started again; a second live process is refused meanwhile", async () => {
    const run = await newRun();
    const first = run.start({ AI_VERSION: "6" });
    const approval = await run.asked();
    const intruder = run.start({ AI_VERSION: "6" });
    expect(await intruder.line(/^error /)).toMatch(/RunDrivenElsewhereError/);
    await first.kill();
    await operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "approve" });

    const second = run.start({ AI_VERSION: "6" });
    expect(await second.line(/^done /)).toBe("done Refunded.");
    expect(await run.approvals()).toHaveLength(1);
    expect(await run.toolRuns()).toHaveLength(1);
  });

  it("ai-sdk v7 durable: killed between the claim and the report, the continued run never runs the tool again, and the console says the outcome is unknown", async () => {
    const run = await newRun();
    const first = run.start({ AI_VERSION: "7", TOOL_BLOCKS: "1" });
    const approval = await run.asked();
    await operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "approve" });
    await run.toolStarted();
    await first.kill();

    const second = run.start({ AI_VERSION: "7" });
    expect(await second.line(/^done /)).toBe("done Refunded.");
    expect(await run.toolRuns()).toHaveLength(1);
    expect((await run.approvals())[0]).toMatchObject({ status: "APPROVED", executedAt: null, executionUnknown: true });
  });
});
