// Durable runs with the Vercel AI SDK, v7 and v6: a run in its own process is
// killed (SIGKILL) while its approval waits, or before the decision, and started
// again with the same runId: it continues from the messages it kept in Tollgate
// (so the call keeps its approvalId), asks nothing again, runs the tool once and
// records what ran; one process drives a run at a time.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { useDurableRuns } from "./agent-process.ts";

const AGENT = fileURLToPath(new URL("./fixtures-ai-sdk-durable.ts", import.meta.url));

// A short liveness window, so a killed agent's approval reads as parked within seconds, not the default minute and a half.
const durable = useDurableRuns(AGENT, "ai-sdk", { TOLLGATE_AGENT_LIVENESS_SECONDS: "3" });
const { newRun } = durable;

describe("durable runs: AI SDK", () => {
  it("ai-sdk v7 durable: killed while waiting and started again, the run continues on the same approval (same approvalId), the tool runs once and what ran is recorded", async () => {
    const run = await newRun();
    const first = run.start({ AI_VERSION: "7" });
    const approval = await run.asked();
    await first.kill();

    const second = run.start({ AI_VERSION: "7" });
    await run.withOneApproval(second.line(/^begun continued/));
    await durable.operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "approve" });
    expect(await run.withOneApproval(second.line(/^done /))).toBe("done Refunded.");

    expect((await run.approvals())[0]).toMatchObject({ status: "APPROVED", externalId: approval.externalId, executedArgs: { order: 42, amount: 30 } });
    expect((await run.toolRuns()).map((ran) => ran.args)).toEqual([{ order: 42, amount: 30 }]);
  });

  it("ai-sdk v6 durable: decided while no process waits (parked in the console), the decision is applied when the run is started again; a second live process is refused meanwhile", async () => {
    const run = await newRun();
    const first = run.start({ AI_VERSION: "6" });
    const approval = await run.asked();
    const intruder = run.start({ AI_VERSION: "6" });
    expect(await run.withOneApproval(intruder.line(/^error /))).toMatch(/RunDrivenElsewhereError/);
    await first.kill();
    // What the console reads: nobody waits, and the run goes on when its agent starts again (not "gone").
    await expect
      .poll(async () => (await durable.operator.approval.get.query({ approvalId: approval.approvalId })).agentWaiting, { timeout: 30_000 })
      .toBe("parked");
    await durable.operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "approve" });

    const second = run.start({ AI_VERSION: "6" });
    expect(await run.withOneApproval(second.line(/^done /))).toBe("done Refunded.");
    expect(await run.toolRuns()).toHaveLength(1);
  });

  it("ai-sdk v7 durable: killed between the claim and the report, the continued run never runs the tool again, and the console says the outcome is unknown", async () => {
    const run = await newRun();
    const first = run.start({ AI_VERSION: "7", TOOL_BLOCKS: "1" });
    const approval = await run.asked();
    await durable.operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "approve" });
    await run.toolStarted();
    await first.kill();

    const second = run.start({ AI_VERSION: "7" });
    expect(await run.withOneApproval(second.line(/^done /))).toBe("done Refunded.");
    expect(await run.toolRuns()).toHaveLength(1);
    expect((await run.approvals())[0]).toMatchObject({ status: "APPROVED", executedAt: null, executionUnknown: true });
  });
});
