// Durable runs with the Claude Agent SDK: a run (runWithApprovals with a runId)
// in its own process, on its own home, defers the call, keeps its Claude
// session in Tollgate and waits; killed (SIGKILL) while waiting, or before the
// decision, and started again with the same runId, it resumes the session
// (its transcript from a shared sessionStore) on the same approval, asks
// nothing again and runs the tool once, or, rejected or canceled meanwhile,
// never; one process drives a run at a time.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useDurableRuns } from "./agent-process.ts";
import { startMessagesApi } from "./anthropic-messages-standin.ts";

const AGENT = fileURLToPath(new URL("./fixtures-claude-agent-durable.ts", import.meta.url));

const durable = useDurableRuns(AGENT, "claude-agent");
const { newRun } = durable;

// The model, shared by every process: the refund first (a call with a new id each time it is generated), then a sentence once it has the tool's result.
let model: Awaited<ReturnType<typeof startMessagesApi>>;
beforeAll(async () => {
  model = await startMessagesApi([{ toolUse: { id: "toolu_refund_1001", name: "mcp__shop__refund", input: { order: "1001", amount: 40 } } }, { text: "Refunded." }], { freshIds: true });
});
afterAll(() => model?.close());

const processEnv = () => ({ ANTHROPIC_BASE_URL: model.url, SESSIONS: path.join(durable.dir, "sessions") });

/** The call never ran, in any process, and the model read `why` as its result (the hook's denial). */
async function expectNotRun(run: { toolRuns(): Promise<unknown[]> }, toolUseId: string, why: string) {
  expect(await run.toolRuns()).toEqual([]);
  const result = model.toolResults.get(toolUseId);
  expect(result).toMatchObject({ is_error: true });
  expect(JSON.stringify(result?.content)).toContain(why);
}

// Each test starts two or three agent processes, each starting Claude Code one or more times: slow on a loaded machine.
describe("durable runs: Claude Agent SDK", { timeout: 240_000 }, () => {
  it("claude-agent durable: killed while waiting and started again on another home, the run resumes its session on the same approval; the edited call runs once; a second live process is refused", async () => {
    const run = await newRun();
    const first = run.start(processEnv());
    const approval = await run.asked();
    expect(approval).toMatchObject({ tool: "mcp__shop__refund", args: { order: "1001", amount: 40 }, externalId: expect.stringMatching(/^toolu_refund_1001_/), framework: "claude-agent" });
    await first.kill();

    const second = run.start(processEnv());
    await run.withOneApproval(second.line(/^begun continued/));
    const intruder = run.start(processEnv());
    expect(await run.withOneApproval(intruder.line(/^error /))).toMatch(/RunDrivenElsewhereError/);
    await durable.operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "edit", args: { order: "1001", amount: 30 } });
    expect(await run.withOneApproval(second.line(/^done /))).toBe("done Refunded.");

    expect((await run.approvals())[0]).toMatchObject({ status: "APPROVED", executedArgs: { order: "1001", amount: 30 } });
    expect((await run.toolRuns()).map((ran) => ran.args)).toEqual([{ order: "1001", amount: 30 }]);
    expect(await durable.operator.request.get.query({ requestId: approval.requestId })).toMatchObject({ request: { status: "COMPLETED" } });
  });

  it("claude-agent durable: decided while no process waits, the decision is applied when the run is started again", async () => {
    const run = await newRun();
    const first = run.start(processEnv());
    const approval = await run.asked();
    await first.kill();
    await durable.operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "approve" });

    const second = run.start(processEnv());
    expect(await run.withOneApproval(second.line(/^done /))).toBe("done Refunded.");
    expect(await second.exited).toBe(0);
    expect((await run.approvals())[0]).toMatchObject({ status: "APPROVED", executedArgs: { order: "1001", amount: 40 } });
    expect((await run.toolRuns()).map((ran) => ran.args)).toEqual([{ order: "1001", amount: 40 }]);
    expect(await durable.operator.request.get.query({ requestId: approval.requestId })).toMatchObject({ request: { status: "COMPLETED" } });
  });

  it("claude-agent durable: rejected while no process waits, the resumed run denies the call through the PreToolUse hook: the tool never runs and the model reads the operator's message", async () => {
    const run = await newRun();
    const first = run.start(processEnv());
    const approval = await run.asked();
    await first.kill();
    await durable.operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "reject", message: "refunds over 30 need a manager" });

    const second = run.start(processEnv());
    await run.withOneApproval(second.line(/^done /));
    expect(await second.exited).toBe(0);
    await expectNotRun(run, approval.externalId!, "refunds over 30 need a manager");
    expect((await run.approvals())[0]).toMatchObject({ status: "REJECTED", executedAt: null, executionClaimedAt: null });
  });

  it("claude-agent durable: canceled (its timeout) while no process waits, the run started again stops there: Claude is not resumed, the model is not called again, the tool never runs, and the request fails as APPROVAL_CANCELED", async () => {
    const run = await newRun();
    const first = run.start({ ...processEnv(), CANCEL_AFTER_MS: "5000" });
    const approval = await run.asked();
    await first.kill();
    await expect.poll(async () => (await durable.operator.approval.get.query({ approvalId: approval.approvalId })).status, { timeout: 30_000 }).toBe("CANCELED");

    const modelCalls = model.calls.length;
    const second = run.start(processEnv());
    const exitCode = await run.withOneApproval(second.exited);
    expect(model.calls.slice(modelCalls)).toEqual([]);
    expect(exitCode).toBe(3);
    expect(second.output()).toContain(`error RunCanceledError: approval ${approval.approvalId} was canceled`);
    expect(model.toolResults.has(approval.externalId!)).toBe(false);
    expect(await run.toolRuns()).toEqual([]);
    expect((await run.approvals())[0]).toMatchObject({ status: "CANCELED", executionClaimedAt: null });
    expect(await durable.operator.request.get.query({ requestId: approval.requestId })).toMatchObject({ request: { status: "FAILED", error: { code: "APPROVAL_CANCELED" } } });
  });

  it("claude-agent durable: its task canceled while no process waits, the run started again ends at once, saying so: the tool never runs and nothing is asked again", async () => {
    const run = await newRun();
    const first = run.start(processEnv());
    const approval = await run.asked();
    await first.kill();
    await durable.operator.task.cancel.mutate({ taskId: approval.taskId, reason: "the customer withdrew" });

    const modelCalls = model.calls.length;
    const second = run.start(processEnv());
    expect(await run.withOneApproval(second.exited)).toBe(3);
    expect(second.output()).toContain(`task ${approval.taskId} was canceled; start a new task instead`);
    expect(model.calls.slice(modelCalls)).toEqual([]);
    expect(await run.toolRuns()).toEqual([]);
    expect(model.toolResults.has(approval.externalId!)).toBe(false);
    expect((await run.approvals())[0]).toMatchObject({ status: "CANCELED", cancellation: { reason: "the customer withdrew" } });
    expect(await durable.operator.request.get.query({ requestId: approval.requestId })).toMatchObject({ request: { status: "CANCELED" } });
  });

  it("claude-agent durable: a second live process with the same runId, started while the first waits, is refused, and the first drives the run to its end", async () => {
    const run = await newRun();
    const first = run.start(processEnv());
    const approval = await run.asked();
    const intruder = run.start(processEnv());
    expect(await run.withOneApproval(intruder.line(/^error /))).toMatch(new RegExp(`RunDrivenElsewhereError: run "${run.runId}" is driven by another live process`));
    expect(await intruder.exited).toBe(3);

    await durable.operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "approve" });
    expect(await first.line(/^done /)).toBe("done Refunded.");
    expect(await first.exited).toBe(0);
    expect(await run.approvals()).toHaveLength(1);
    expect((await run.toolRuns()).map((ran) => ran.args)).toEqual([{ order: "1001", amount: 40 }]);
    expect(await durable.operator.request.get.query({ requestId: approval.requestId })).toMatchObject({ request: { status: "COMPLETED" } });
  });

  it("claude-agent durable: killed between the claim and the report, the resumed run never runs the tool again, the model reads that the outcome is unknown, and the console says so", async () => {
    const run = await newRun();
    const first = run.start({ ...processEnv(), TOOL_BLOCKS: "1" });
    const approval = await run.asked();
    await durable.operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "approve" });
    await run.toolStarted();
    await first.kill();

    const second = run.start(processEnv());
    expect(await run.withOneApproval(second.line(/^done /))).toBe("done Refunded.");
    expect(await run.toolRuns()).toHaveLength(1);
    expect(JSON.stringify(model.toolResults.get(approval.externalId!)?.content)).toContain("the call's outcome is unknown, and it is not run again");
    expect((await run.approvals())[0]).toMatchObject({ status: "APPROVED", executedAt: null, executionUnknown: true });
  });
});
