// What the agent sent is shown as it sent it: arguments keep their key order
// through storage and every answer, on both databases (jsonb would sort keys by
// length, putting a run_sql statement last).
import { describe, expect, it } from "vitest";
import { agentSdk, type OperatorClient } from "./clients.ts";
import { useTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let operator: OperatorClient;
useTestServer((server, client) => {
  test = server;
  operator = client;
});

const ARGS = { statement: "DELETE FROM users WHERE last_login < now() - interval '2 years'", batchSize: 500, database: "prod", options: { zeta: 1, a: 2 }, dryRun: false, tags: ["gdpr"] };
const ORDER = ["statement", "batchSize", "database", "options", "dryRun", "tags"];

describe("argument order", () => {
  it("order: proposed, approved (edited) and executed arguments, request input and the trace keep the agent's key order", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({});
    const begun = await sdk.begin({ sessionId, agent: "dba" });
    const asked = await sdk.client.approval.request.mutate({ requestId: begun.requestId, tool: "run_sql", args: ARGS });

    const pending = await operator.approval.get.query({ approvalId: asked.approvalId });
    expect(Object.keys(pending.args as object)).toEqual(ORDER);
    expect(Object.keys((pending.args as typeof ARGS).options)).toEqual(["zeta", "a"]);
    const listed = await operator.approval.list.query({ status: "PENDING", limit: 10 });
    expect(Object.keys(listed.items.find((item) => item.approvalId === asked.approvalId)!.args as object)).toEqual(ORDER);

    const edited = { ...ARGS, batchSize: 100 };
    await operator.approval.decide.mutate({ approvalId: asked.approvalId, action: "edit", args: edited });
    const decided = await sdk.client.approval.await.query({ approvalId: asked.approvalId, timeoutMs: 1000 });
    expect(Object.keys(decided.decision!.args as object)).toEqual(ORDER);
    await sdk.client.approval.reportExecution.mutate({ approvalId: asked.approvalId, executedArgs: edited, result: { deleted: 3, at: "now" } });
    const done = await operator.approval.get.query({ approvalId: asked.approvalId });
    expect(Object.keys(done.executedArgs as object)).toEqual(ORDER);
    expect(Object.keys(done.executionResult as object)).toEqual(["deleted", "at"]);

    const timeline = await operator.task.timeline.query({ taskId: begun.taskId });
    const requested = timeline.events.find((event) => event.type === "approval.requested")!;
    expect(Object.keys((requested.data as { args: object }).args)).toEqual(ORDER);
    sdk.close();
  });
});
