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
