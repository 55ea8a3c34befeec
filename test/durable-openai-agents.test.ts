// Durable runs with OpenAI Agents: a run (runWithApprovals with a runId) in its
// own process is killed (SIGKILL) while its approval waits, or before the
// decision, and started again with the same runId: it continues from the
// paused run kept (sealed) in Tollgate, asks nothing again, runs the tool once,
// and records what ran; one process drives a run at a time.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { useDurableRuns } from "./agent-process.ts";

const AGENT = fileURLToPath(new URL("./fixtures-openai-agents-durable.ts", import.meta.url));

const durable = useDurableRuns(AGENT, "openai");
const { newRun } = durable;

// Each test starts two or three agent processes, each loading its framework: slow on a loaded machine.
describe("durable runs: OpenAI Agents", { timeout: 240_000 }, () => {
  it("openai-agents durable: killed while waiting and started again, the run continues on the same approval, the tool runs once and what ran is recorded", async () => {
    const run = await newRun();
    const first = run.start();
    const approval = await run.asked();
    await first.kill();

    const second = run.start();
    await run.withOneApproval(second.line(/^begun continued/));
    await durable.operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "approve" });
    expect(await run.withOneApproval(second.line(/^done /))).toContain("refunded 40 on order 1001");

    expect((await run.approvals())[0]).toMatchObject({ status: "APPROVED", executedArgs: { order: "1001", amount: 40 } });
    expect((await run.toolRuns()).map((ran) => ran.args)).toEqual([{ order: "1001", amount: 40 }]);
  });

  it("openai-agents durable: decided while no process waits, the decision is applied when the run is started again; a second live process is refused meanwhile", async () => {
    const run = await newRun();
    const first = run.start();
    const approval = await run.asked();
    const intruder = run.start();
    expect(await run.withOneApproval(intruder.line(/^error /))).toMatch(/RunDrivenElsewhereError/);
    await first.kill();
    await durable.operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "approve" });

    const second = run.start();
    expect(await run.withOneApproval(second.line(/^done /))).toContain("refunded 40 on order 1001");
    expect(await run.toolRuns()).toHaveLength(1);
  });

  it("openai-agents durable: killed between the claim and the report, the continued run never runs the tool again, tells the model the outcome is unknown and ends; the console says so", async () => {
    const run = await newRun();
    const first = run.start({ TOOL_BLOCKS: "1" });
    const approval = await run.asked();
    await durable.operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "approve" });
    await run.toolStarted();
    await first.kill();

    const second = run.start();
    expect(await run.withOneApproval(second.line(/^done /))).toContain(`approval ${approval.approvalId} was claimed at`);
    expect(second.output()).toContain("the call's outcome is unknown, and it is not run again");
    expect(await second.exited).toBe(0);
    expect(await run.toolRuns()).toHaveLength(1);
    expect((await run.approvals())[0]).toMatchObject({ status: "APPROVED", executedAt: null, executionUnknown: true });
  });
});
