// What the review screen is told is true: arguments keep the agent's key order
// through storage and every answer, on both databases (jsonb would sort keys by
// length, putting a run_sql statement last), and an execution that ran other
// arguments than the approved ones is recorded, audited and pushed, never hidden.
import { io } from "socket.io-client";
import { describe, expect, it } from "vitest";
import { agentSdk, type OperatorClient } from "./clients.ts";
import { AGENT_KEY } from "./harness.ts";
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
    const asked = await sdk.call("approval.request", { requestId: begun.requestId, tool: "run_sql", args: ARGS });

    const pending = await operator.approval.get.query({ approvalId: asked.approvalId });
    expect(Object.keys(pending.args as object)).toEqual(ORDER);
    expect(Object.keys((pending.args as typeof ARGS).options)).toEqual(["zeta", "a"]);
    const listed = await operator.approval.list.query({ status: "PENDING", limit: 10 });
    expect(Object.keys(listed.items.find((item) => item.approvalId === asked.approvalId)!.args as object)).toEqual(ORDER);

    const edited = { ...ARGS, batchSize: 100 };
    await operator.approval.decide.mutate({ approvalId: asked.approvalId, action: "edit", args: edited });
    const decided = await sdk.call("approval.await", { approvalId: asked.approvalId, timeoutMs: 1000 });
    expect(Object.keys(decided.decision!.args as object)).toEqual(ORDER);
    await sdk.call("approval.reportExecution", { approvalId: asked.approvalId, executedArgs: edited, result: { deleted: 3, at: "now" } });
    const done = await operator.approval.get.query({ approvalId: asked.approvalId });
    expect(Object.keys(done.executedArgs as object)).toEqual(ORDER);
    expect(Object.keys(done.executionResult as object)).toEqual(["deleted", "at"]);

    const timeline = await operator.task.timeline.query({ taskId: begun.taskId });
    const requested = timeline.events.find((event) => event.type === "approval.requested")!;
    expect(Object.keys((requested.data as { args: object }).args)).toEqual(ORDER);
    sdk.close();
  });
});

describe("executed is not approved", () => {
  async function approvedCall(args: Record<string, string | string[]>) {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({});
    const begun = await sdk.begin({ sessionId, agent: "mailer" });
    const asked = await sdk.call("approval.request", { requestId: begun.requestId, tool: "send_email", args });
    return { sdk, approvalId: asked.approvalId };
  }

  it("deviation: running the original arguments after an edit is recorded on the approval, audited and pushed live", async () => {
    const { sdk, approvalId } = await approvedCall({ to: "all@example.com", subject: "Hi" });
    await operator.approval.decide.mutate({ approvalId, action: "edit", args: { to: "one@example.com", subject: "Hi" } });
    const login = await fetch(`${test.url}/api/trpc/auth.login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "admin@example.com", password: "correct horse battery" }) });
    const token = (login.headers.get("set-cookie") ?? "").split(";")[0]!.split("=")[1]!;
    const socket = io(test.url, { path: "/socket.io", auth: { token }, transports: ["websocket"] });
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", () => resolve());
      socket.once("connect_error", reject);
    });
    const pushed = new Promise<{ approvalId: string; deviated: boolean }>((resolve) => socket.on("approval:executed", resolve));

    await sdk.call("approval.reportExecution", { approvalId, executedArgs: { to: "all@example.com", subject: "Hi" } });
    expect(await pushed).toMatchObject({ approvalId, deviated: true });
    expect(await operator.approval.get.query({ approvalId })).toMatchObject({ executionDeviated: true, approvedArgs: { to: "one@example.com" }, executedArgs: { to: "all@example.com" } });
    const audit = await operator.audit.list.query({ subjectId: approvalId, action: "approval.execution_deviated" });
    expect(audit.items).toEqual([expect.objectContaining({ actorType: "agent", data: expect.objectContaining({ approvedArgs: { to: "one@example.com", subject: "Hi" }, executedArgs: { to: "all@example.com", subject: "Hi" } }) })]);
    socket.close();
    sdk.close();
  });

  it("deviation: the same arguments with keys in another order are not a deviation (compared as JSON values)", async () => {
    const { sdk, approvalId } = await approvedCall({ to: "a@example.com", subject: "Hi", cc: ["b@example.com"] });
    await operator.approval.decide.mutate({ approvalId, action: "approve" });
    await sdk.call("approval.reportExecution", { approvalId, executedArgs: { cc: ["b@example.com"], subject: "Hi", to: "a@example.com" } });
    expect(await operator.approval.get.query({ approvalId })).toMatchObject({ executionDeviated: false });
    expect((await operator.audit.list.query({ subjectId: approvalId, action: "approval.execution_deviated" })).items).toEqual([]);
    sdk.close();
  });
});

describe("is anyone waiting", () => {
  it("liveness: an approval nobody has asked about past the window is marked gone; asking again marks it waiting; a webhook always counts", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({});
    const begun = await sdk.begin({ sessionId, agent: "mailer" });
    const asked = await sdk.call("approval.request", { requestId: begun.requestId, tool: "send_email", args: {} });
    const hooked = await sdk.begin({ sessionId, agent: "mailer", resumeUrl: "http://127.0.0.1:9/hook" });
    const viaWebhook = await sdk.call("approval.request", { requestId: hooked.requestId, tool: "send_email", args: {} });
    expect(await operator.approval.get.query({ approvalId: asked.approvalId })).toMatchObject({ agentWaiting: "waiting" });

    const realNow = test.server.deps.now;
    try {
      const later = new Date(realNow().getTime() + test.server.deps.agentLivenessMs + 1_000);
      test.server.deps.now = () => later;
      expect(await operator.approval.get.query({ approvalId: asked.approvalId })).toMatchObject({ agentWaiting: "gone" });
      expect(await operator.approval.get.query({ approvalId: viaWebhook.approvalId })).toMatchObject({ agentWaiting: "webhook" });
      // The agent comes back and asks: it is waiting again, as of now.
      await sdk.call("approval.await", { approvalId: asked.approvalId, timeoutMs: 0 });
      expect(await operator.approval.get.query({ approvalId: asked.approvalId })).toMatchObject({ agentWaiting: "waiting", agentSeenAt: later.toISOString() });
    } finally {
      test.server.deps.now = realNow;
    }
    await operator.approval.decide.mutate({ approvalId: asked.approvalId, action: "approve" });
    expect(await operator.approval.get.query({ approvalId: asked.approvalId })).toMatchObject({ agentWaiting: null });
    sdk.close();
  });

  it("liveness: an agent holding the server-sent decision stream open counts as waiting", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({});
    const begun = await sdk.begin({ sessionId, agent: "mailer" });
    const asked = await sdk.call("approval.request", { requestId: begun.requestId, tool: "send_email", args: {} });
    const realNow = test.server.deps.now;
    const stream = new AbortController();
    try {
      const later = new Date(realNow().getTime() + test.server.deps.agentLivenessMs + 1_000);
      test.server.deps.now = () => later;
      expect(await operator.approval.get.query({ approvalId: asked.approvalId })).toMatchObject({ agentWaiting: "gone" });
      const input = encodeURIComponent(JSON.stringify({ requestId: begun.requestId }));
      const response = await fetch(`${test.url}/api/trpc/approval.onDecision?input=${input}`, { headers: { authorization: `Bearer ${AGENT_KEY}` }, signal: stream.signal });
      expect(response.status).toBe(200);
      let item = await operator.approval.get.query({ approvalId: asked.approvalId });
      for (let tries = 0; item.agentWaiting !== "waiting" && tries < 100; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        item = await operator.approval.get.query({ approvalId: asked.approvalId });
      }
      expect(item).toMatchObject({ agentWaiting: "waiting", agentSeenAt: later.toISOString() });
    } finally {
      stream.abort();
      test.server.deps.now = realNow;
    }
    sdk.close();
  });
});

describe("finding an approval", () => {
  it("text filter: matches the arguments' text, the session title, the tool, the agent and the reason, in any case; LIKE wildcards are literal", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({ title: "Quarterly Cleanup" });
    const ask = async (agent: string, tool: string, args: Record<string, string>, reason?: string) => {
      const begun = await sdk.begin({ sessionId, agent });
      return (await sdk.call("approval.request", { requestId: begun.requestId, tool, args, ...(reason ? { reason } : {}) })).approvalId;
    };
    const purge = await ask("dba-search", "run_sql", { statement: "DELETE FROM Invoices_2019 WHERE paid" });
    const mail = await ask("mailer-search", "send_email", { to: "cfo@example.com", body: "discount of 50% today" }, "Asked by the CFO");
    const other = await ask("dba-search", "run_sql", { statement: "SELECT 1" });

    const found = async (text: string) => (await operator.approval.list.query({ status: "PENDING", text, sessionId })).items.map((item) => item.approvalId).sort();
    expect(await found("delete from invoices")).toEqual([purge]);
    expect(await found("CFO@EXAMPLE")).toEqual([mail]);
    expect(await found("50%")).toEqual([mail]);
    expect(await found("5_%")).toEqual([]);
    expect(await found("asked by the cfo")).toEqual([mail]);
    expect(await found("quarterly")).toEqual([purge, mail, other].sort());
    expect(await found("MAILER-SEARCH")).toEqual([mail]);
    expect(await found("nothing like this")).toEqual([]);
    // Decided approvals are searched by the history view, not the pending one.
    await operator.approval.decide.mutate({ approvalId: purge, action: "reject", message: "no" });
    expect(await found("delete from invoices")).toEqual([]);
    const history = await operator.approval.list.query({ status: "DECIDED", text: "invoices_2019" });
    expect(history.items.map((item) => item.approvalId)).toEqual([purge]);
    sdk.close();
  });

  it("by id: the console refreshes just the approvals a live event named; another workspace's ids are simply absent", async () => {
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({});
    const begun = await sdk.begin({ sessionId, agent: "by-id" });
    const { approvalId } = await sdk.call("approval.request", { requestId: begun.requestId, tool: "noop", args: {} });
    const listed = await operator.approval.list.query({ approvalIds: [approvalId, "apr_doesnotexist00000000"] });
    expect(listed.items.map((item) => item.approvalId)).toEqual([approvalId]);
    await expect(operator.approval.list.query({ approvalIds: [] })).rejects.toThrow(/name at least one approval/);
    sdk.close();
  });
});
