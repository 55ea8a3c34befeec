// Durable runs with LangChain v1's createAgent: humanInTheLoopMiddleware asks,
// the graph's tool node runs the tool, wrapped in runOnce, which claims the
// approval's execution inside the tool and reports what ran. The agent process
// (SQLite checkpointer) is killed (SIGKILL) while waiting, and between the
// claim and the report, and started again with the same runId (its thread id).
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { useDurableRuns } from "./agent-process.ts";

const AGENT = fileURLToPath(new URL("./fixtures-langchain-durable-agent.ts", import.meta.url));

const durable = useDurableRuns(AGENT, "langchain");
const { newRun } = durable;

// Each test starts two or three agent processes, each loading its framework: slow on a loaded machine.
describe("durable runs: LangChain createAgent", { timeout: 240_000 }, () => {
  it("langchain durable: killed while waiting and started again, the run continues on the same approval; the edited call runs once, under the approval's id as idempotency key, and what ran is recorded; a second live process is refused", async () => {
    const run = await newRun();
    const first = run.start();
    const approval = await run.asked();
    await first.kill();

    const second = run.start();
    await run.withOneApproval(second.line(/^begun continued/));
    const intruder = run.start();
    expect(await run.withOneApproval(intruder.line(/^error /))).toMatch(/RunDrivenElsewhereError/);
    await durable.operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "edit", args: { to: "ada.lovelace@example.com" } });
    expect(await run.withOneApproval(second.line(/^done /))).toBe("done done: sent to ada.lovelace@example.com");

    expect(await run.toolRuns()).toEqual([{ args: { to: "ada.lovelace@example.com" }, idempotencyKey: approval.approvalId, pid: expect.any(Number) }]);
    expect(await durable.operator.approval.get.query({ approvalId: approval.approvalId })).toMatchObject({
      status: "APPROVED",
      executedArgs: { to: "ada.lovelace@example.com" },
      executionResult: "sent to ada.lovelace@example.com",
    });
  });

  it("langchain durable: killed between the claim and the report, the tool never runs again, the model reads that the outcome is unknown, and the console says so", async () => {
    const run = await newRun();
    const first = run.start({ TOOL_BLOCKS: "1" });
    const approval = await run.asked();
    await durable.operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "approve" });
    await run.toolStarted();
    await first.kill();

    const second = run.start();
    expect(await run.withOneApproval(second.line(/^done /))).toContain(`approval ${approval.approvalId} was claimed at`);
    expect(second.output()).toContain("the call's outcome is unknown, and it is not run again");
    expect(await run.toolRuns()).toHaveLength(1);
    expect((await run.approvals())[0]).toMatchObject({ status: "APPROVED", executedAt: null, executionUnknown: true });
  });
});
