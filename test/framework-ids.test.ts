// What framework adapters rely on, over real HTTP: an approval named by the
// framework's own id of the paused call (externalId), found again by a retried
// or restarted adapter; the framework state stored with a request
// (resumeToken) and read back, with every approval's decision by those ids, by
// whichever process resumes it (request.load); the agent's summary for the
// operator.
import { describe, expect, it } from "vitest";
import { agentSdk, type OperatorClient } from "./clients.ts";
import { AGENT_KEY } from "./harness.ts";
import { callHttp, useTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let operator: OperatorClient;
useTestServer((started, loggedIn) => {
  test = started;
  operator = loggedIn;
});

async function begun(title: string, resumeToken?: string) {
  const sdk = agentSdk(test.url, undefined, { push: false });
  const { sessionId } = await sdk.openSession({ title });
  return { sdk, request: await sdk.call("request.begin", { sessionId, agent: "framework-agent", ...(resumeToken ? { resumeToken } : {}) }) };
}

describe("framework ids", () => {
  it("externalId: asking again for the same call under its id, from a new client, returns the same approval and its decision", async () => {
    const { request } = await begun("external id");
    const ask = { requestId: request.requestId, tool: "send_email", args: { to: "a@example.com", cc: ["b@example.com"] }, externalId: "call_1" };
    const first = await agentSdk(test.url).call("approval.request", ask);
    // A restarted adapter: another client, the arguments' keys in another order.
    const again = await agentSdk(test.url).call("approval.request", { ...ask, args: { cc: ["b@example.com"], to: "a@example.com" } });
    expect(again).toMatchObject({ approvalId: first.approvalId, status: "PENDING" });

    await operator.approval.decide.mutate({ approvalId: first.approvalId, action: "reject", message: "not this one" });
    expect(await agentSdk(test.url).call("approval.request", ask)).toMatchObject({
      approvalId: first.approvalId,
      status: "REJECTED",
      decision: { action: "reject", message: "not this one" },
    });
    expect((await operator.approval.list.query({ sessionId: request.sessionId })).items).toHaveLength(1);
  });

  it("externalId: another call under an id already used on the request is CONFLICT, naming the approval; the same id on another request is another approval", async () => {
    const { sdk, request } = await begun("external id conflict");
    const first = await sdk.call("approval.request", { requestId: request.requestId, tool: "pay", args: { amount: 10 }, externalId: "call_7" });
    for (const other of [{ tool: "pay", args: { amount: 11 } }, { tool: "refund", args: { amount: 10 } }]) {
      const refused = await callHttp(test.url, "approval.request", "mutation", { requestId: request.requestId, ...other, externalId: "call_7" }, { authorization: `Bearer ${AGENT_KEY}` });
      expect(refused.status).toBe(409);
      expect(refused.body.error.message).toContain(`externalId "call_7" of request ${request.requestId} already names approval ${first.approvalId}`);
    }
    const { sdk: otherSdk, request: other } = await begun("another request");
    const second = await otherSdk.call("approval.request", { requestId: other.requestId, tool: "pay", args: { amount: 10 }, externalId: "call_7" });
    expect(second.approvalId).not.toBe(first.approvalId);
  });

  // The asks really race on PostgreSQL (the unique index decides); on the embedded database they queue.
  it("externalId: concurrent asks for one call under its id make one approval", async () => {
    const { request } = await begun("external id race");
    const ask = { requestId: request.requestId, tool: "delete_user", args: { id: 42 }, externalId: "interrupt-9f3" };
    const answers = await Promise.all(Array.from({ length: 6 }, () => agentSdk(test.url).call("approval.request", ask)));
    expect(new Set(answers.map((answer) => answer.approvalId)).size).toBe(1);
    const { items } = await operator.approval.list.query({ sessionId: request.sessionId });
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ externalId: "interrupt-9f3" });
  });

  it("resumeToken: another process reads the framework state and every approval's decision by its id; other keys get NOT_FOUND", async () => {
    const state = JSON.stringify({ run: "serialised", turn: 3, pending: ["call_a", "call_b"] });
    const { sdk, request } = await begun("resume token", state);
    const a = await sdk.call("approval.request", { requestId: request.requestId, tool: "send_email", args: { to: "x@example.com" }, externalId: "call_a" });
    await sdk.call("approval.request", { requestId: request.requestId, tool: "send_sms", args: { to: "+100" }, externalId: "call_b" });
    await operator.approval.decide.mutate({ approvalId: a.approvalId, action: "edit", args: { to: "y@example.com" } });

    // The process that resumes knows nothing but the request id (from a webhook, say).
    const loaded = await agentSdk(test.url).call("request.load", { requestId: request.requestId });
    expect(loaded).toMatchObject({ requestId: request.requestId, taskId: request.taskId, agent: "framework-agent", status: "PAUSED", resumeToken: state });
    expect(loaded.approvals.map((approval) => [approval.externalId, approval.tool, approval.status, approval.decision?.action ?? null])).toEqual([
      ["call_a", "send_email", "APPROVED", "edit"],
      ["call_b", "send_sms", "PENDING", null],
    ]);
    expect(loaded.approvals[0]!.decision).toMatchObject({ args: { to: "y@example.com" } });

    const { key } = await operator.agentKey.create.mutate({ name: "another team" });
    const foreign = await callHttp(test.url, "request.load", "query", { requestId: request.requestId }, { authorization: `Bearer ${key}` });
    expect(foreign.status).toBe(404);
  });

  it("resumeToken: kept on every path of request.begin (a follow-on in the task too); one over the limit is refused naming the field", async () => {
    const { sdk, request } = await begun("token paths", "thread-1");
    const followOn = await sdk.call("request.begin", { sessionId: request.sessionId, agent: "framework-agent", taskId: request.taskId, resumeToken: "thread-1:2", idempotencyKey: "follow-on-1" });
    const retried = await sdk.call("request.begin", { sessionId: request.sessionId, agent: "framework-agent", taskId: request.taskId, resumeToken: "thread-1:2", idempotencyKey: "follow-on-1" });
    expect(retried.requestId).toBe(followOn.requestId);
    expect((await sdk.call("request.load", { requestId: request.requestId })).resumeToken).toBe("thread-1");
    expect((await sdk.call("request.load", { requestId: followOn.requestId })).resumeToken).toBe("thread-1:2");
    const plain = await sdk.call("request.begin", { sessionId: request.sessionId, agent: "framework-agent" });
    expect((await sdk.call("request.load", { requestId: plain.requestId })).resumeToken).toBeNull();

    const tooLong = await callHttp(
      test.url,
      "request.begin",
      "mutation",
      { sessionId: request.sessionId, agent: "framework-agent", resumeToken: "x".repeat(256 * 1024 + 1) },
      { authorization: `Bearer ${AGENT_KEY}` },
    );
    expect(tooLong.status).toBe(400);
    expect(JSON.stringify(tooLong.body.error)).toContain("resumeToken");
  });

  it("summary: the agent's Markdown for the operator comes with the approval", async () => {
    const { sdk, request } = await begun("summary");
    const summary = "Refund **100 EUR** to order `42`:\n\n- the customer asked twice\n- within policy";
    const asked = await sdk.call("approval.request", { requestId: request.requestId, tool: "refund", args: { order: 42 }, summary });
    expect(await operator.approval.get.query({ approvalId: asked.approvalId })).toMatchObject({ summary, externalId: null });
  });

  it("question: reaches a person even where a rule approves every call, and is answered in free text or declined, never approved", async () => {
    await operator.policy.create.mutate({ name: "everything runs", match: { tool: "*" }, outcome: "approve" });
    try {
      const { sdk, request } = await begun("question");
      const asked = await sdk.call("approval.request", { requestId: request.requestId, tool: "ask_user", args: {}, kind: "question", summary: "Which **warehouse** ships order 42?" });
      expect(asked).toMatchObject({ status: "PENDING", gate: { allow: ["respond", "reject"] } });
      await expect(operator.approval.decide.mutate({ approvalId: asked.approvalId, action: "approve" })).rejects.toThrow(/allows respond, reject; "approve" is not one of them/);
      await operator.approval.decide.mutate({ approvalId: asked.approvalId, action: "respond", message: "Rotterdam" });
      expect(await sdk.call("approval.await", { approvalId: asked.approvalId, timeoutMs: 0 })).toMatchObject({ status: "REJECTED", decision: { action: "respond", message: "Rotterdam" } });
      expect(await operator.approval.get.query({ approvalId: asked.approvalId })).toMatchObject({ kind: "question" });
      // A tool call in the same workspace is still approved by the rule.
      expect(await sdk.call("approval.request", { requestId: request.requestId, tool: "lookup", args: {} })).toMatchObject({ status: "APPROVED" });
    } finally {
      const { items } = await operator.policy.list.query();
      for (const rule of items.filter((item) => item.name === "everything runs")) await operator.policy.delete.mutate({ policyId: rule.policyId });
    }
  });

  it("batch: the calls one turn paused are listed together for the request, apart from another turn's", async () => {
    const { sdk, request } = await begun("batch");
    const ask = (tool: string, batch: string) => sdk.call("approval.request", { requestId: request.requestId, tool, args: {}, batch });
    const turn1 = await Promise.all([ask("send_email", "turn-1"), ask("send_sms", "turn-1"), ask("post_slack", "turn-1")]);
    await ask("send_fax", "turn-2");
    const { items } = await operator.approval.list.query({ requestId: request.requestId, batch: "turn-1" });
    expect(items.map((item) => item.approvalId).sort()).toEqual(turn1.map((asked) => asked.approvalId).sort());
    expect(new Set(items.map((item) => item.batch))).toEqual(new Set(["turn-1"]));
  });

  it("framework: a new task keeps the framework its first request named, shown with its approvals; a name that is not one is refused", async () => {
    const sdk = agentSdk(test.url, undefined, { push: false });
    const { sessionId } = await sdk.openSession({ title: "framework" });
    const root = await sdk.call("request.begin", { sessionId, agent: "planner", framework: "langgraph" });
    await sdk.call("request.begin", { sessionId, agent: "planner", taskId: root.taskId, framework: "openai-agents" });
    const child = await sdk.call("request.begin", { sessionId, agent: "helper", parentRequestId: root.requestId });
    const asked = await sdk.call("approval.request", { requestId: root.requestId, tool: "send_email", args: {} });
    const tree = await operator.task.tree.query({ sessionId });
    expect(tree.roots.map((node) => [node.agent, node.framework, node.children.map((inner) => [inner.agent, inner.framework])])).toEqual([["planner", "langgraph", [["helper", null]]]]);
    expect(child.taskId).not.toBe(root.taskId);
    expect(await operator.approval.get.query({ approvalId: asked.approvalId })).toMatchObject({ framework: "langgraph" });
    const refused = await callHttp(test.url, "request.begin", "mutation", { sessionId, agent: "x", framework: "Lang Graph!" }, { authorization: `Bearer ${AGENT_KEY}` });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body.error)).toContain("framework");
  });

  it("form: the agent's fields come back in its order; an answer that does not fit them is refused, one that fits reaches the agent", async () => {
    const { sdk, request } = await begun("form");
    const form = {
      type: "object",
      properties: {
        name: { type: "string", title: "Full name", minLength: 2 },
        email: { type: "string", format: "email" },
        seats: { type: "integer", minimum: 1, maximum: 10 },
        plan: { type: "string", enum: ["basic", "pro"] },
        invoice: { type: "boolean", default: false },
      },
      required: ["name", "email", "seats"],
    };
    const asked = await sdk.call("approval.request", { requestId: request.requestId, tool: "elicitation", args: {}, kind: "form", form, summary: "Who should get the licence?" });
    expect(asked).toMatchObject({ status: "PENDING", gate: { allow: ["edit", "reject"] } });
    const stored = await operator.approval.get.query({ approvalId: asked.approvalId });
    expect(Object.keys(stored.form!.properties)).toEqual(["name", "email", "seats", "plan", "invoice"]);

    await expect(operator.approval.decide.mutate({ approvalId: asked.approvalId, action: "edit", args: { name: "A", email: "not-an-email", seats: 11, colour: "red" } })).rejects.toThrow(
      /does not fit its fields: .*colour is not a field of this form.*email must match format "email"/,
    );
    await expect(operator.approval.decide.mutate({ approvalId: asked.approvalId, action: "approve" })).rejects.toThrow(/"approve" is not one of them/);
    const answer = { name: "Ada Lovelace", email: "ada@example.com", seats: 3, plan: "pro", invoice: true };
    await operator.approval.decide.mutate({ approvalId: asked.approvalId, action: "edit", args: answer });
    const answered = await sdk.call("approval.await", { approvalId: asked.approvalId, timeoutMs: 0 });
    expect(answered).toMatchObject({ status: "APPROVED", decision: { action: "edit", args: answer } });
    // An answer lets no tool run: it carries no receipt.
    expect(answered.decision!.receipt).toBeUndefined();
  });

  it("policy: a rule's reject, role and approvers apply to questions and forms as far as one person's answer can: rejected, asked of its role, answered by one", async () => {
    const rules = [
      await operator.policy.create.mutate({ name: "no wire forms", match: { tool: "wire_money" }, outcome: "reject", message: "wires are never asked of people" }),
      await operator.policy.create.mutate({ name: "legal answers", match: { tool: "legal_*" }, outcome: "require", role: "ADMIN", approvers: 2 }),
    ];
    try {
      const { sdk, request } = await begun("policy on answers");
      const form = { type: "object", properties: { iban: { type: "string" } } };
      expect(await sdk.call("approval.request", { requestId: request.requestId, tool: "wire_money", args: {}, kind: "form", form })).toMatchObject({
        status: "REJECTED",
        decision: { action: "reject", message: "wires are never asked of people" },
      });
      const legal = await sdk.call("approval.request", { requestId: request.requestId, tool: "legal_question", args: {}, kind: "question", summary: "May we quote the contract?" });
      expect(legal).toMatchObject({ status: "PENDING", gate: { role: "ADMIN", approvers: 1, allow: ["respond", "reject"] } });
    } finally {
      for (const { policyId } of rules) await operator.policy.delete.mutate({ policyId });
    }
  });

  it("form: a form without its fields, or with a field that is not a primitive, is refused naming where", async () => {
    const { request } = await begun("bad form");
    const ask = (extra: Record<string, unknown>) =>
      callHttp(test.url, "approval.request", "mutation", { requestId: request.requestId, tool: "elicitation", args: {}, ...extra }, { authorization: `Bearer ${AGENT_KEY}` });
    const missing = await ask({ kind: "form" });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain("a form approval needs form");
    const nested = await ask({ kind: "form", form: { type: "object", properties: { address: { type: "object" } } } });
    expect(nested.status).toBe(400);
    expect(nested.body.error.message).toContain("form.properties.address.type");
    const huge = await ask({ kind: "form", form: { type: "object", properties: { a: { type: "string", description: "x".repeat(70 * 1024) } } } });
    expect(huge.status).toBe(400);
    expect(JSON.stringify(huge.body.error)).toContain("must be at most 64 KB as JSON");
    const stray = await ask({ form: { type: "object", properties: { a: { type: "string" } } } });
    expect(stray.status).toBe(400);
    expect(stray.body.error.message).toContain('form is only for kind "form"');
  });
});
