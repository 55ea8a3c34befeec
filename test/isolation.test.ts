// Workspaces see nothing of each other. Workspace B has real rows of every
// kind; workspace A's agent key and admin call every procedure with B's ids:
// each is refused as NOT_FOUND (never FORBIDDEN, which would confirm the id
// exists), and lists never show B's rows. Socket rooms carry nothing across:
// B's events never reach A's sockets. The procedures are read from the router,
// so a new one without a case here fails the test with its name.
import { io } from "socket.io-client";
import { describe, expect, it } from "vitest";
import { appRouter } from "../server/api/router.ts";
import { newId } from "../server/domain/ids.ts";
import { hashPassword } from "../server/services/auth.ts";
import { agentSdk, operatorClient, type OperatorClient } from "./clients.ts";
import { ADMIN, AGENT_KEY } from "./harness.ts";
import { callHttp, useTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let adminA: OperatorClient;
useTestServer((server, client) => {
  test = server;
  adminA = client;
});

type Ids = Record<"sessionId" | "taskId" | "requestId" | "approvalId" | "policyId" | "channelId" | "keyId" | "tokenId" | "operatorId" | "agentKeyB" | "workspaceId" | "runId" | "pinId" | "invitationId", string>;
type Caller = "agent" | "admin";

/** Calls with one of B's ids, as A: each must be NOT_FOUND. */
const FOREIGN: Record<string, { as: Caller; kind: "query" | "mutation"; input: (b: Ids) => unknown }> = {
  "auth.revokeToken": { as: "admin", kind: "mutation", input: (b) => ({ tokenId: b.tokenId }) },
  "auth.switchWorkspace": { as: "admin", kind: "mutation", input: (b) => ({ workspaceId: b.workspaceId }) },
  "session.open": { as: "agent", kind: "mutation", input: (b) => ({ sessionId: b.sessionId }) },
  "request.begin": { as: "agent", kind: "mutation", input: (b) => ({ sessionId: b.sessionId, agent: "intruder" }) },
  "request.complete": { as: "agent", kind: "mutation", input: (b) => ({ requestId: b.requestId }) },
  "request.fail": { as: "agent", kind: "mutation", input: (b) => ({ requestId: b.requestId, error: { message: "x" } }) },
  "request.trace": { as: "agent", kind: "mutation", input: (b) => ({ requestId: b.requestId, events: [{ type: "note", data: {} }] }) },
  "request.get": { as: "admin", kind: "query", input: (b) => ({ requestId: b.requestId }) },
  "request.load": { as: "agent", kind: "query", input: (b) => ({ requestId: b.requestId }) },
  "request.delegate": { as: "agent", kind: "mutation", input: (b) => ({ requestId: b.requestId }) },
  // B's own call under B's framework id: found by that id, still NOT_FOUND.
  "approval.request": { as: "agent", kind: "mutation", input: (b) => ({ requestId: b.requestId, tool: "b_tool", args: { b: true }, externalId: "call_b" }) },
  "approval.await": { as: "agent", kind: "query", input: (b) => ({ approvalId: b.approvalId, timeoutMs: 0 }) },
  "approval.claimExecution": { as: "agent", kind: "mutation", input: (b) => ({ approvalId: b.approvalId, claimKey: "k" }) },
  "approval.reportExecution": { as: "agent", kind: "mutation", input: (b) => ({ approvalId: b.approvalId, executedArgs: {} }) },
  "approval.get": { as: "admin", kind: "query", input: (b) => ({ approvalId: b.approvalId }) },
  "approval.decide": { as: "admin", kind: "mutation", input: (b) => ({ approvalId: b.approvalId, action: "approve" }) },
  "approval.reportNotRun": { as: "agent", kind: "mutation", input: (b) => ({ approvalId: b.approvalId, reason: "another call of the turn was rejected" }) },
  "approval.agentState": { as: "admin", kind: "query", input: (b) => ({ approvalId: b.approvalId }) },
  "run.begin": { as: "agent", kind: "mutation", input: (b) => ({ runId: "a-run", holder: "intruder", sessionId: b.sessionId, agent: "intruder" }) },
  // B's run under B's own runId: runIds belong to the key that began them.
  "run.hold": { as: "agent", kind: "mutation", input: (b) => ({ runId: b.runId, holder: "intruder", state: "taken over" }) },
  "policy.unpinTool": { as: "admin", kind: "mutation", input: (b) => ({ pinId: b.pinId }) },
  "policy.pinToolFromApproval": { as: "admin", kind: "mutation", input: (b) => ({ approvalId: b.approvalId, sha256: "0".repeat(64) }) },
  "task.tree": { as: "admin", kind: "query", input: (b) => ({ sessionId: b.sessionId }) },
  "task.timeline": { as: "admin", kind: "query", input: (b) => ({ taskId: b.taskId }) },
  "task.cancel": { as: "admin", kind: "mutation", input: (b) => ({ taskId: b.taskId }) },
  "task.cancelAsAgent": { as: "agent", kind: "mutation", input: (b) => ({ taskId: b.taskId }) },
  "operator.setRole": { as: "admin", kind: "mutation", input: (b) => ({ operatorId: b.operatorId, role: "VIEWER" }) },
  "operator.setDisabled": { as: "admin", kind: "mutation", input: (b) => ({ operatorId: b.operatorId, disabled: true }) },
  "operator.resetPassword": { as: "admin", kind: "mutation", input: (b) => ({ operatorId: b.operatorId, password: "taken over!" }) },
  "operator.setGroups": { as: "admin", kind: "mutation", input: (b) => ({ operatorId: b.operatorId, groups: ["x"] }) },
  "operator.revokeInvitation": { as: "admin", kind: "mutation", input: (b) => ({ invitationId: b.invitationId }) },
  "agentKey.revoke": { as: "admin", kind: "mutation", input: (b) => ({ keyId: b.keyId }) },
  "agentKey.setTrust": { as: "admin", kind: "mutation", input: (b) => ({ keyId: b.keyId, trustedAgents: ["*"] }) },
  "policy.update": { as: "admin", kind: "mutation", input: (b) => ({ policyId: b.policyId, enabled: false }) },
  "policy.delete": { as: "admin", kind: "mutation", input: (b) => ({ policyId: b.policyId }) },
  "notification.updateChannel": { as: "admin", kind: "mutation", input: (b) => ({ channelId: b.channelId, enabled: false }) },
  "notification.deleteChannel": { as: "admin", kind: "mutation", input: (b) => ({ channelId: b.channelId }) },
  "notification.ofApproval": { as: "admin", kind: "query", input: (b) => ({ approvalId: b.approvalId }) },
  "thread.configure": { as: "agent", kind: "mutation", input: (b) => ({ taskId: b.taskId, config: {} }) },
  "thread.get": { as: "admin", kind: "query", input: (b) => ({ taskId: b.taskId }) },
  "state.load": { as: "agent", kind: "query", input: (b) => ({ taskId: b.taskId }) },
  "state.save": { as: "agent", kind: "mutation", input: (b) => ({ taskId: b.taskId, requestId: b.requestId, state: { x: 1 } }) },
  "state.remember": { as: "agent", kind: "mutation", input: (b) => ({ taskId: b.taskId, requestId: b.requestId, memory: { x: 1 } }) },
  "state.history": { as: "admin", kind: "query", input: (b) => ({ taskId: b.taskId }) },
  "state.get": { as: "admin", kind: "query", input: (b) => ({ taskId: b.taskId }) },
  "state.diff": { as: "admin", kind: "query", input: (b) => ({ taskId: b.taskId, fromVersion: 0, toVersion: 1 }) },
  "continuity.load": { as: "agent", kind: "query", input: (b) => ({ taskId: b.taskId, requestId: b.requestId }) },
  "context.touch": { as: "agent", kind: "mutation", input: (b) => ({ taskId: b.taskId, requestId: b.requestId, entities: [{ type: "customer", id: "c1", name: "C1" }] }) },
  "context.assemble": { as: "agent", kind: "mutation", input: (b) => ({ taskId: b.taskId }) },
};

/** Calls that name B's rows only as a filter: they answer, with nothing of B's. */
const FILTERS: Record<string, { as: Caller; kind: "query" | "mutation"; input: (b: Ids) => unknown }> = {
  "approval.list": { as: "admin", kind: "query", input: (b) => ({ sessionId: b.sessionId }) },
  "approval.decideMany": { as: "admin", kind: "mutation", input: (b) => ({ approvalIds: [b.approvalId], action: "approve" }) },
  "audit.list": { as: "admin", kind: "query", input: (b) => ({ subjectId: b.approvalId }) },
  "policy.evaluate": { as: "admin", kind: "query", input: (b) => ({ agent: "a", tool: "t", agentKeyId: b.keyId, sessionId: b.sessionId }) },
};

/** Calls that take no id of another row: what they answer must hold nothing of B's. */
const NO_FOREIGN_ID: Record<string, string> = {
  "auth.login": "logs in by email and password (B's admin logging in lands in B)",
  "auth.logout": "ends the caller's own session",
  "auth.me": "the caller",
  "auth.invitation": "names an invitation by its link's token alone, which only its holder has (never stored in the clear)",
  "auth.acceptInvitation": "names an invitation by its link's token alone, which only its holder has (never stored in the clear)",
  "operator.invitations": "the caller's workspace (checked below)",
  "auth.createToken": "a token for the caller",
  "auth.tokens": "the caller's workspace's tokens (checked below)",
  "auth.tokenLimit": "the caller's workspace",
  "auth.changePassword": "the caller's own password",
  "workspace.list": "the caller's own memberships (checked below)",
  "workspace.create": "a new workspace whose only member is the caller",
  "auth.setTokenLimit": "the caller's workspace",
  "session.list": "the caller's workspace (checked below)",
  "approval.onDecision": "a stream scoped like approval.await: its request or task is looked up in the caller's workspace",
  "audit.verify": "the caller's workspace's chain",
  "audit.seal": "the caller's workspace's chain",
  "operator.list": "the caller's workspace (checked below)",
  "operator.create": "creates in the caller's workspace",
  "agentKey.create": "creates in the caller's workspace",
  "agentKey.list": "the caller's workspace (checked below)",
  "policy.list": "the caller's workspace (checked below)",
  "policy.create": "creates in the caller's workspace",
  "policy.simulate": "replays the caller's workspace's history; replacePolicyId is checked like policy.update",
  "policy.defaults": "the caller's workspace",
  "policy.setDefaults": "the caller's workspace",
  "notification.channels": "the caller's workspace (checked below)",
  "notification.createChannel": "creates in the caller's workspace",
  "continuity.record": "records against the caller's own task and request",
  "receipts.rotateKey": "the caller's workspace's own signing key",
  "policy.pinTool": "pins in the caller's workspace",
  "policy.pins": "the caller's workspace's pins",
  "workspace.settings": "the caller's workspace",
  "workspace.updateSettings": "the caller's workspace",
};

/** Workspace B, made as a second workspace is: its own admin, who then makes everything else through the API. */
async function workspaceB(): Promise<{ ids: Ids; adminB: OperatorClient }> {
  const prisma = test.server.database.prisma;
  const workspaceId = newId("ws");
  const operatorId = newId("op");
  const credentials = { email: `admin-b-${workspaceId}@example.com`, password: "workspace b admin password" };
  await prisma.workspace.create({ data: { id: workspaceId, name: "B" } });
  const accountId = newId("acc");
  await prisma.account.create({ data: { id: accountId, email: credentials.email, passwordHash: await hashPassword(credentials.password) } });
  await prisma.operator.create({ data: { id: operatorId, workspaceId, accountId, email: credentials.email, name: "B admin", role: "ADMIN" } });
  const adminB = await operatorClient(test.url, credentials);
  const { id: keyId, key } = await adminB.agentKey.create.mutate({ name: "b agents" });
  const sdk = agentSdk(test.url, key);
  const { sessionId } = await sdk.openSession({ title: "B's session" });
  const begun = await sdk.begin({ sessionId, agent: "b-agent" });
  await sdk.call("thread.configure", { taskId: begun.taskId, config: {} });
  await sdk.call("state.save", { taskId: begun.taskId, requestId: begun.requestId, state: { secret: "B" } });
  const { approvalId } = await sdk.call("approval.request", { requestId: begun.requestId, tool: "b_tool", args: { b: true }, externalId: "call_b" });
  const run = await sdk.call("run.begin", { runId: "run-of-workspace-b", holder: "b-process", sessionId, agent: "b-runner" });
  sdk.close();
  const { policyId } = await adminB.policy.create.mutate({ name: "b rule", match: { tool: "b_lookup" }, outcome: "approve" });
  const channel = await adminB.notification.createChannel.mutate({ name: "b hook", kind: "WEBHOOK", url: "http://127.0.0.1:9/b-hook" });
  const { id: tokenId } = await adminB.auth.createToken.mutate({ name: "b token", password: credentials.password });
  const { invitationId } = await adminB.operator.create.mutate({ email: `invited-${workspaceId}@example.com`, name: "Invited to B", role: "VIEWER" });
  const { pinId } = await adminB.policy.pinTool.mutate({ agent: "files", definition: { name: "read_file", annotations: { readOnlyHint: true } } });
  return {
    ids: { sessionId, taskId: begun.taskId, requestId: begun.requestId, approvalId, policyId, channelId: channel.channel.channelId, keyId, tokenId, operatorId, agentKeyB: key, workspaceId, runId: run.runId, pinId, invitationId },
    adminB,
  };
}

describe("workspaces are isolated", () => {
  it("isolation: every procedure called by workspace A with workspace B's ids is NOT_FOUND, and A's lists show nothing of B's", async () => {
    const { ids: b } = await workspaceB();
    const { token } = await adminA.auth.createToken.mutate({ name: "isolation", password: ADMIN.password });
    const headers: Record<Caller, Record<string, string>> = { agent: { authorization: `Bearer ${AGENT_KEY}` }, admin: { authorization: `Bearer ${token}` } };
    const call = (path: string, as: Caller, kind: "query" | "mutation", input: unknown) => callHttp(test.url, path, kind, input, headers[as]);
    const bIds = Object.entries(b).filter(([name]) => name !== "agentKeyB").map(([, id]) => id);
    // An id the caller sent may be named back in the refusal ("approval apr_… not found"); any other is a leak.
    const leaks = (body: unknown, sent: unknown = {}) => bIds.filter((id) => JSON.stringify(body).includes(id) && !JSON.stringify(sent).includes(id));

    const procedures = Object.keys(appRouter._def.procedures);
    const uncovered = procedures.filter((path) => !(path in FOREIGN) && !(path in FILTERS) && !(path in NO_FOREIGN_ID));
    expect(uncovered, "procedures without a cross-workspace case").toEqual([]);

    const wrong: string[] = [];
    for (const [path, { as, kind, input }] of Object.entries(FOREIGN)) {
      const sent = input(b);
      const { status, body } = await call(path, as, kind, sent);
      const code = body?.error?.data?.code;
      if (status !== 404 || code !== "NOT_FOUND") wrong.push(`${path}: ${status} ${code ?? ""} ${JSON.stringify(body).slice(0, 200)}`);
      if (leaks(body, sent).length) wrong.push(`${path} leaked ${leaks(body, sent).join(", ")}`);
    }
    for (const [path, { as, kind, input }] of Object.entries(FILTERS)) {
      const sent = input(b);
      const { status, body } = await call(path, as, kind, sent);
      if (status === 200 && path === "approval.decideMany") {
        const results = body.result.data.results as { ok: boolean; code?: string }[];
        if (!results.every((result) => !result.ok && result.code === "NOT_FOUND")) wrong.push(`${path}: ${JSON.stringify(results)}`);
      } else if (status !== 200 && status !== 404) wrong.push(`${path}: ${status} ${JSON.stringify(body).slice(0, 200)}`);
      if (leaks(body, sent).length) wrong.push(`${path} leaked ${leaks(body, sent).join(", ")}`);
    }
    for (const [path, input] of Object.entries({ "session.list": {}, "operator.list": {}, "agentKey.list": {}, "policy.list": {}, "notification.channels": {}, "auth.tokens": { everyone: true }, "audit.list": {}, "workspace.list": {}, "operator.invitations": {} })) {
      const { status, body } = await call(path, "admin", "query", input);
      if (status !== 200) wrong.push(`${path}: ${status}`);
      if (leaks(body).length) wrong.push(`${path} leaked ${leaks(body).join(", ")}`);
    }
    expect(wrong).toEqual([]);

    // And B's rows are all still there, untouched.
    const prisma = test.server.database.prisma;
    expect(await prisma.approval.findUniqueOrThrow({ where: { id: b.approvalId } })).toMatchObject({ status: "PENDING" });
    expect(await prisma.agentKey.findUniqueOrThrow({ where: { id: b.keyId } })).toMatchObject({ revokedAt: null });
    expect(await prisma.operator.findUniqueOrThrow({ where: { id: b.operatorId } })).toMatchObject({ disabledAt: null, role: "ADMIN" });
  });

  it("isolation: B's events never reach A's sockets, operator or agent", async () => {
    const { ids: b, adminB } = await workspaceB();
    const login = await fetch(`${test.url}/api/trpc/auth.login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ADMIN) });
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
    const sockets = [
      io(test.url, { auth: { token: cookie.split("=")[1]! }, transports: ["websocket"], reconnection: false }),
      io(test.url, { auth: { agentKey: AGENT_KEY }, transports: ["websocket"], reconnection: false }),
    ];
    const heard: string[][] = [[], []];
    await Promise.all(
      sockets.map(
        (socket, index) =>
          new Promise<void>((resolve, reject) => {
            socket.onAny((name: string, payload: unknown) => heard[index]!.push(`${name} ${JSON.stringify(payload)}`));
            socket.once("connect", () => resolve());
            socket.once("connect_error", reject);
          }),
      ),
    );
    try {
      // B's traffic: a new approval, and a decision on B's waiting one.
      const sdkB = agentSdk(test.url, b.agentKeyB);
      const begun = await sdkB.begin({ sessionId: b.sessionId, agent: "b-agent" });
      const asked = await sdkB.call("approval.request", { requestId: begun.requestId, tool: "b_tool_2", args: {} });
      await adminB.approval.decide.mutate({ approvalId: asked.approvalId, action: "approve" });
      sdkB.close();

      // Then A's own: once A's sockets hear it, anything of B's would have come before.
      const sdkA = agentSdk(test.url);
      const { sessionId } = await sdkA.openSession({});
      const mine = await sdkA.begin({ sessionId, agent: "a-agent" });
      const askedA = await sdkA.call("approval.request", { requestId: mine.requestId, tool: "a_tool", args: {} });
      await adminA.approval.decide.mutate({ approvalId: askedA.approvalId, action: "approve" });
      sdkA.close();
      await expect.poll(() => heard[0]!.some((event) => event.includes(askedA.approvalId))).toBe(true);
      await expect.poll(() => heard[1]!.some((event) => event.startsWith("decision") && event.includes(askedA.approvalId))).toBe(true);

      for (const events of heard) {
        for (const id of [b.sessionId, begun.requestId, begun.taskId, asked.approvalId]) expect(events.filter((event) => event.includes(id))).toEqual([]);
      }
    } finally {
      for (const socket of sockets) socket.close();
    }
  });
});
