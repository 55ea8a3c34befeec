// What the review screen is told about a call's risk: the tool's MCP
// annotations the agent sent, kept with the approval and answered wherever it
// is read, and refused when malformed rather than half kept.
import { TRPCClientError } from "@trpc/client";
import { describe, expect, it } from "vitest";
import { agentSdk, type OperatorClient } from "./clients.ts";
import { useTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let operator: OperatorClient;
useTestServer((server, client) => {
  test = server;
  operator = client;
});

async function begun(agent = "dba") {
  const sdk = agentSdk(test.url);
  const { sessionId } = await sdk.openSession({ title: "purge drafts" });
  return { sdk, ...(await sdk.begin({ sessionId, agent })) };
}

describe("tool annotations", () => {
  it("annotations: kept with the approval and answered to the agent (request, await, request.load) and the operator (get, list)", async () => {
    const { sdk, requestId } = await begun();
    const annotations = { title: "Run SQL", readOnlyHint: false, destructiveHint: true, openWorldHint: false };
    const asked = await sdk.call("approval.request", { requestId, tool: "run_sql", args: { query: "DELETE FROM drafts" }, annotations });
    expect(asked.annotations).toEqual(annotations);
    // The second ask on the request is written on remembered facts: the other write path.
    const second = await sdk.call("approval.request", { requestId, tool: "read_rows", args: {}, annotations: { readOnlyHint: true } });
    const plain = await sdk.call("approval.request", { requestId, tool: "noop", args: {} });
    expect(plain.annotations).toBeUndefined();

    expect((await operator.approval.get.query({ approvalId: asked.approvalId })).annotations).toEqual(annotations);
    const listed = await operator.approval.list.query({ requestId });
    expect(Object.fromEntries(listed.items.map((item) => [item.tool, item.annotations]))).toEqual({ run_sql: annotations, read_rows: { readOnlyHint: true }, noop: null });
    await operator.approval.decide.mutate({ approvalId: second.approvalId, action: "approve" });
    expect((await sdk.call("approval.await", { approvalId: second.approvalId, timeoutMs: 1000 })).annotations).toEqual({ readOnlyHint: true });
    const loaded = await sdk.call("request.load", { requestId });
    expect(loaded.approvals.find((approval) => approval.approvalId === asked.approvalId)!.annotations).toEqual(annotations);
    sdk.close();
  });

  it("annotations: an unknown or mistyped hint is a 400 naming it, and no approval is written", async () => {
    const { sdk, requestId } = await begun();
    for (const annotations of [{ destructivehint: true }, { readOnlyHint: "yes" }, { title: "x".repeat(201) }]) {
      const error = await sdk.call("approval.request", { requestId, tool: "run_sql", args: {}, annotations: annotations as never }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TRPCClientError);
      expect(error).toMatchObject({ data: { httpStatus: 400 }, message: expect.stringMatching(/annotations/) });
    }
    expect((await operator.approval.list.query({ requestId })).items).toEqual([]);
    sdk.close();
  });
});

describe("risk labels", () => {
  it("risk: a rule's label and paths reach the approval as it was asked, with the patterns found, in the list and in full", async () => {
    const rule = await operator.policy.create.mutate({
      name: "customer deletes",
      match: { tool: "purge_*" },
      outcome: "require",
      riskLabel: "deletes customer data",
      riskPaths: ["$.table", "$.filters.status"],
    });
    expect(rule).toMatchObject({ riskLabel: "deletes customer data", riskPaths: ["$.table", "$.filters.status"] });
    expect((await operator.policy.list.query()).items.find((item) => item.policyId === rule.policyId)).toMatchObject({ riskLabel: "deletes customer data" });

    const { sdk, requestId } = await begun("janitor");
    const args = { table: "customers", filters: { status: ["draft", "disputed"] }, sql: "DELETE FROM customers", dryRun: false };
    const asked = await sdk.call("approval.request", { requestId, tool: "purge_rows", args });
    const quiet = await sdk.call("approval.request", { requestId, tool: "lookup", args: { id: 1 } });
    // The label is the rule's as it was: a later edit changes the next asks only.
    await operator.policy.update.mutate({ policyId: rule.policyId, riskLabel: "renamed" });

    const listed = await operator.approval.list.query({ requestId });
    const item = listed.items.find((entry) => entry.approvalId === asked.approvalId)!;
    expect(item.risk.label).toBe("deletes customer data");
    expect(item.risk.flags.map((flag) => [flag.kind, flag.path])).toEqual([
      ["rule", "$.table"],
      ["rule", "$.filters.status"],
      ["sql-no-where", "$.sql"],
      ["dry-run-off", "$.dryRun"],
    ]);
    expect(listed.items.find((entry) => entry.approvalId === quiet.approvalId)!.risk).toEqual({ label: null, flags: [] });
    expect((await operator.approval.get.query({ approvalId: asked.approvalId })).risk).toEqual(item.risk);
    sdk.close();
  });

  it("risk: a highlight path that is not a rule's path is a 400 naming riskPaths, and no rule is written", async () => {
    const error = await operator.policy.create
      .mutate({ name: "bad paths", match: { tool: "x" }, outcome: "require", riskPaths: ["$.rows[*].id"] })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ data: { httpStatus: 400 }, message: expect.stringMatching(/^riskPaths: path "\$\.rows\[\*\]\.id"/) });
    expect((await operator.policy.list.query()).items.some((item) => item.name === "bad paths")).toBe(false);
  });
});

describe("cancel for a dead agent", () => {
  it("cancel: the child's task ends with its reason and author on the approval; its live parent is not canceled and its status is recomputed", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({ title: "refunds" });
    const parent = await sdk.begin({ sessionId, agent: "orchestrator", kind: "orchestrator" });
    const child = await sdk.begin({ sessionId, agent: "refunder", parentRequestId: parent.requestId });
    const asked = await sdk.call("approval.request", { requestId: child.requestId, tool: "refund", args: { amount: 5 } });
    const paused = await operator.task.tree.query({ sessionId });
    const statusOf = (tree: typeof paused, taskId: string): string | undefined => {
      const walk = (nodes: typeof paused.roots): string | undefined => {
        for (const node of nodes) {
          if (node.taskId === taskId) return node.status;
          const found = walk(node.children as typeof paused.roots);
          if (found) return found;
        }
        return undefined;
      };
      return walk(tree.roots);
    };
    expect(statusOf(paused, parent.taskId)).toBe("PAUSED");

    await operator.task.cancel.mutate({ taskId: child.taskId, reason: "the refunder's process died" });
    const approval = await operator.approval.get.query({ approvalId: asked.approvalId });
    expect(approval).toMatchObject({ status: "CANCELED", sessionTitle: "refunds", cancellation: { by: "admin@example.com", reason: "the refunder's process died" } });
    const after = await operator.task.tree.query({ sessionId });
    expect(statusOf(after, child.taskId)).toBe("CANCELED");
    expect(statusOf(after, parent.taskId)).toBe("RUNNING");
    sdk.close();
  });
});

describe("failing channels", () => {
  it("notifications: a channel whose latest announcements all failed is flagged failing on the channel list, with its error", async () => {
    // Nothing listens on port 9 of this machine: every delivery is refused, for real.
    const { channel: created } = await operator.notification.createChannel.mutate({ name: "dead-hook", kind: "SLACK", url: "http://127.0.0.1:9/hook", digestThreshold: 10, digestWindowSeconds: 1 });
    try {
      const { sdk, requestId } = await begun("pager");
      for (const index of [1, 2, 3]) await sdk.call("approval.request", { requestId, tool: `page_${index}`, args: {} });
      await expect
        .poll(async () => (await operator.notification.channels.query()).channels.find((channel) => channel.name === "dead-hook")?.health, { timeout: 20_000 })
        .toMatchObject({ failing: true, failuresInARow: 3, lastError: expect.any(String) });
      sdk.close();
    } finally {
      await operator.notification.deleteChannel.mutate({ channelId: created.channelId });
    }
  });
});
