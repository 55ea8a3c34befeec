// Durable runs with LangGraph: an agent process on a SQLite checkpointer is
// killed (SIGKILL) while its approval waits, and started again with the same
// runId (the thread id): it continues the run without asking again, the tool
// runs once with the decided arguments, and one process drives a run at a time.
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, onTestFinished } from "vitest";
import { startAgent, useDurableRuns, withOneApproval } from "./agent-process.ts";
import { AGENT_KEY } from "./harness.ts";

const AGENT = fileURLToPath(new URL("./fixtures-langgraph-durable-agent.ts", import.meta.url));

const durable = useDurableRuns(AGENT, "langgraph");
const { newRun } = durable;

// Each test starts two or three agent processes, each loading its framework: slow on a loaded machine.
describe("durable runs: LangGraph", { timeout: 240_000 }, () => {
  it("langgraph durable: killed while waiting and started again, the run continues on the same approval and the tool runs once with the edit", async () => {
    const run = await newRun();
    const first = run.start();
    const approval = await run.asked();
    expect(approval).toMatchObject({ tool: "send_email", status: "PENDING", runId: run.runId });
    await first.kill();

    const second = run.start();
    await run.withOneApproval(second.line(/^asking /));
    await durable.operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "edit", args: { to: "bob@example.com" } });
    expect(await run.withOneApproval(second.line(/^done /))).toContain('"outcome":"sent"');
    expect(await second.exited).toBe(0);

    expect((await run.approvals())[0]).toMatchObject({ status: "APPROVED", executedArgs: { to: "bob@example.com" } });
    expect(await run.toolRuns()).toEqual([{ args: { to: "bob@example.com" }, idempotencyKey: approval!.approvalId, pid: expect.any(Number) }]);
    expect(await durable.operator.request.get.query({ requestId: approval!.requestId })).toMatchObject({ request: { status: "COMPLETED" } });
  });

  it("langgraph durable: decided while no process waits (parked in the console), the decision is applied when the run is started again", async () => {
    const run = await newRun();
    const first = run.start();
    const approval = await run.asked();
    await first.kill();
    await durable.operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });

    const second = run.start();
    expect(await run.withOneApproval(second.line(/^done /))).toContain('"outcome":"sent"');
    expect((await run.toolRuns()).map((ran) => ran.args)).toEqual([{ to: "ada@example.com" }]);
  });

  it("langgraph durable: a second live process with the same runId is refused, and the first drives the run to its end", async () => {
    const run = await newRun();
    const first = run.start();
    await run.asked();
    const second = run.start();
    expect(await run.withOneApproval(second.line(/^error /))).toMatch(new RegExp(`RunDrivenElsewhereError: run "${run.runId}" is driven by another live process`));
    expect(await second.exited).toBe(3);

    const [approval] = await run.approvals();
    await durable.operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });
    expect(await first.line(/^done /)).toContain('"outcome":"sent"');
    expect(await run.approvals()).toHaveLength(1);
    expect(await run.toolRuns()).toHaveLength(1);
  });

  it("langgraph durable: killed between the claim and the report, the tool never runs again and the console says the outcome is unknown", async () => {
    const run = await newRun();
    const first = run.start({ TOOL_BLOCKS: "1" });
    const approval = await run.asked();
    await durable.operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });
    await run.toolStarted();
    await first.kill();

    const second = run.start();
    expect(await run.withOneApproval(second.line(/^done /))).toContain('"outcome":"claimed by another process"');
    expect(await run.toolRuns()).toHaveLength(1);
    const [after] = await run.approvals();
    expect(after).toMatchObject({ status: "APPROVED", executedAt: null, executionUnknown: true });
  });

  it("langgraph durable: sdk/README's crash-safe example, killed while its approval waits and started again after the decision, runs the tool once and prints what happened", async () => {
    const readme = await readFile(path.join(import.meta.dirname, "../sdk/README.md"), "utf8");
    // Marked illustrative there: the packed package's test does not install a SQLite checkpointer; this test runs it.
    const block = [...readme.matchAll(/```js illustrative\n([\s\S]*?)```/g)].map((match) => match[1]!).find((text) => text.includes("SqliteSaver"));
    expect(block).toContain("SqliteSaver");
    // The repository's SDK in place of the installed package (the packed one is tried by test/sdk-package.test.ts).
    const sdk = path.join(import.meta.dirname, "../sdk/src");
    // Beside the tests, so its imports resolve to the repository's packages; its checkpoints go to the scratch folder.
    const example = path.join(import.meta.dirname, `.readme-crash-safe-${process.pid}.mts`);
    onTestFinished(() => rm(example, { force: true }));
    const checkpoints = path.join(durable.dir, "readme-checkpoints.sqlite");
    await writeFile(
      example,
      block!
        .replace(/"@tollgate\/sdk\/langgraph"/, JSON.stringify(`${sdk}/adapters/langgraph.ts`))
        .replace(/"@tollgate\/sdk"/, JSON.stringify(`${sdk}/index.ts`))
        .replace('"checkpoints.sqlite"', JSON.stringify(checkpoints)),
    );
    const env = { TOLLGATE_URL: durable.test.url, TOLLGATE_AGENT_KEY: AGENT_KEY };
    const pending = async () => (await durable.operator.approval.list.query({ status: "PENDING", tool: "send_email", agent: "refund-graph", limit: 10 })).items;

    const first = startAgent(example, env);
    let exited = false;
    void first.exited.then(() => (exited = true));
    while ((await pending()).length === 0) {
      if (exited) throw new Error(`the example exited without asking:\n${first.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await first.kill();
    const [approval] = await pending();
    await durable.operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });

    const second = startAgent(example, env);
    const asked = async () => (await durable.operator.approval.list.query({ tool: "send_email", agent: "refund-graph", limit: 10 })).items;
    expect(await withOneApproval(asked, second.exited), second.output()).toBe(0);
    expect(second.output().trim()).toBe("sent");
    expect(await durable.operator.approval.get.query({ approvalId: approval!.approvalId })).toMatchObject({
      status: "APPROVED",
      executedArgs: { to: "ada@example.com" },
      executionResult: { sent: true, to: "ada@example.com", idempotencyKey: approval!.approvalId },
    });
  });
});
