// Gates owned by operators: policy rules decide or set the gate, an agent's
// ask can only narrow it, quorums, remembered decisions and dry runs, through
// the router on a fresh database.
import { describe, expect, it } from "vitest";
import { expireDueApprovals } from "../server/services/approvals/expire-approvals.ts";
import { createServiceDeps } from "../server/services/deps.ts";
import { addPersonWith, agentCaller, operatorCaller, useFreshApp, type TestApp, type TestDatabase } from "./harness.ts";

let db: TestDatabase;
let app: TestApp;
useFreshApp((created) => (db = created), (fresh) => (app = fresh));

async function running(agentName = "mailer") {
  const agent = agentCaller(app.deps);
  const { sessionId } = await agent.session.open({ metadata: { tier: "gold" } });
  const begun = await agent.request.begin({ sessionId, agent: agentName });
  return { agent, sessionId, begun };
}

async function operatorWithRole(role: "OPERATOR" | "ADMIN" | "VIEWER", email: string) {
  const admin = await operatorCaller(app.deps);
  await addPersonWith(app.deps, admin, { email, name: email, role, password: "long enough password" });
  return operatorCaller(app.deps, { email, password: "long enough password" });
}

describe("the agent cannot set its own gate", () => {
  it("attack: onTimeout approve without a policy that allows it is refused, and nothing is written", async () => {
    const { agent, begun } = await running();
    await expect(
      agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { to: "x@example.com" }, timeoutMs: 100, onTimeout: "approve" }),
    ).rejects.toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining('onTimeout "approve" is not allowed for tool "send_email"') });
    expect(await db.prisma.approval.count()).toBe(0);
    expect((await db.prisma.request.findUniqueOrThrow({ where: { id: begun.requestId } })).status).toBe("RUNNING");
  });

  it("attack: allow cannot remove reject; the operator can still refuse", async () => {
    const { agent, begun } = await running();
    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: {}, allow: ["approve"] });
    expect(asked.gate?.allow).toEqual(["approve", "reject"]);
    const operator = await operatorCaller(app.deps);
    expect(await operator.approval.decide({ approvalId: asked.approvalId, action: "reject", message: "no" })).toMatchObject({ status: "REJECTED" });
  });

  it("narrowing: the agent may shorten the policy's timeout but not lengthen it, and may not add actions", async () => {
    const admin = await operatorCaller(app.deps);
    await admin.policy.create({ name: "mail", match: { tool: "send_*" }, outcome: "require", timeoutMs: 60_000, allow: ["approve", "reject"] });
    const { agent, begun } = await running();
    const longer = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { n: 1 }, timeoutMs: 3_600_000, allow: ["approve", "edit"] });
    const stored = await db.prisma.approval.findUniqueOrThrow({ where: { id: longer.approvalId } });
    expect(stored.timeoutMs).toBe(60_000);
    expect(stored.allowedActions).toEqual(["approve", "reject"]);
    const shorter = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { n: 2 }, timeoutMs: 5_000 });
    expect((await db.prisma.approval.findUniqueOrThrow({ where: { id: shorter.approvalId } })).timeoutMs).toBe(5_000);
  });

  it("narrowing: onTimeout approve is accepted where an admin's rule allows it, and the timeout then approves", async () => {
    const admin = await operatorCaller(app.deps);
    await admin.policy.create({ name: "low-risk reads", match: { tool: "read_*" }, outcome: "require", allowApproveOnTimeout: true });
    const { agent, begun } = await running();
    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "read_file", args: {}, timeoutMs: 100, onTimeout: "approve" });
    app.deps.now = () => new Date(Date.now() + 1_000);
    expect(await expireDueApprovals(app.deps)).toBe(1);
    expect(await agent.approval.await({ approvalId: asked.approvalId, timeoutMs: 0 })).toMatchObject({
      status: "EXPIRED",
      decision: { action: "approve", decider: "timeout" },
    });
  });

  it("timeout: a rule's cancel default ends the approval CANCELED, and the chain resumes", async () => {
    const admin = await operatorCaller(app.deps);
    await admin.policy.create({ name: "cancel on silence", match: {}, outcome: "require", timeoutMs: 1_000, onTimeout: "cancel" });
    const { agent, begun } = await running();
    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: {} });
    app.deps.now = () => new Date(Date.now() + 2_000);
    expect(await expireDueApprovals(app.deps)).toBe(1);
    expect(await agent.approval.await({ approvalId: asked.approvalId, timeoutMs: 0 })).toMatchObject({ status: "CANCELED" });
    expect((await db.prisma.request.findUniqueOrThrow({ where: { id: begun.requestId } })).status).toBe("RUNNING");
  });

  it("default: the workspace default timeout applies when no rule matches, and it can never be approve", async () => {
    const admin = await operatorCaller(app.deps);
    await expect(admin.policy.setDefaults({ timeoutMs: 60_000, onTimeout: "approve" as never })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await admin.policy.setDefaults({ timeoutMs: 60_000, onTimeout: "cancel" });
    const { agent, begun } = await running();
    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "anything", args: {} });
    expect(asked.gate).toMatchObject({ policyId: null, onTimeout: "cancel", expiresAt: expect.any(String) });
  });
});

describe("rules decide", () => {
  it("auto-approve: the call is approved at once, recorded like a person's decision with the rule as decider, and nothing pauses", async () => {
    const admin = await operatorCaller(app.deps);
    const rule = await admin.policy.create({ name: "lookups", match: { tool: "lookup_*" }, outcome: "approve" });
    const { agent, begun } = await running();
    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "lookup_order", args: { id: 7 } });
    expect(asked).toMatchObject({
      status: "APPROVED",
      decision: { action: "approve", decidedBy: "policy:lookups", decider: "policy", policyId: rule.policyId },
    });
    expect((await db.prisma.request.findUniqueOrThrow({ where: { id: begun.requestId } })).status).toBe("RUNNING");
    const history = await admin.approval.list({ status: "DECIDED" });
    expect(history.items[0]).toMatchObject({ approvalId: asked.approvalId, decider: "policy", policy: { policyId: rule.policyId, name: "lookups", version: 1 } });
    const audit = await db.prisma.auditEntry.findFirstOrThrow({ where: { subjectId: asked.approvalId } });
    expect(audit).toMatchObject({ actorType: "policy", actorId: rule.policyId, actorLabel: "policy:lookups", action: "approval.decided" });
    expect((await admin.audit.verify()).ok).toBe(true);
    // The agent can report what ran, as after a person's approval.
    await agent.approval.reportExecution({ approvalId: asked.approvalId, executedArgs: { id: 7 } });
  });

  it("auto-reject: the agent receives the rule's message", async () => {
    const admin = await operatorCaller(app.deps);
    await admin.policy.create({
      name: "no external mail",
      match: { tool: "send_email", args: [{ path: "$.to", op: "matches", value: "@example\\.com$" }] },
      outcome: "reject",
      message: "mail outside example.com is not allowed",
    });
    const { agent, begun } = await running();
    expect(await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { to: "me@example.com" } })).toMatchObject({
      status: "REJECTED",
      decision: { action: "reject", message: "mail outside example.com is not allowed", decidedBy: "policy:no external mail" },
    });
    expect(await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { to: "me@corp.test" } })).toMatchObject({ status: "PENDING" });
  });

  it("order: the first matching rule in priority order decides; session metadata and the agent key match too", async () => {
    const admin = await operatorCaller(app.deps);
    await admin.policy.create({ name: "big payments need a person", priority: 10, match: { tool: "pay", args: [{ path: "$.amount", op: "gt", value: 1000 }] }, outcome: "require" });
    await admin.policy.create({ name: "gold customers' payments", priority: 20, match: { tool: "pay", session: [{ path: "$.tier", op: "eq", value: "gold" }] }, outcome: "approve" });
    const { agent, begun } = await running();
    expect((await agent.approval.request({ requestId: begun.requestId, tool: "pay", args: { amount: 50 } })).status).toBe("APPROVED");
    expect((await agent.approval.request({ requestId: begun.requestId, tool: "pay", args: { amount: 5000 } })).status).toBe("PENDING");
  });

  it("versions: an edit bumps the rule's version, decisions name the version they ran under, and another node sees the change at once", async () => {
    const admin = await operatorCaller(app.deps);
    const rule = await admin.policy.create({ name: "reads", match: { tool: "read_*" }, outcome: "approve" });
    const { agent, begun } = await running();
    const otherDeps = createServiceDeps(db, app.bus);
    await otherDeps.receipts.ready();
    const otherNode = agentCaller(otherDeps);
    expect((await otherNode.approval.request({ requestId: begun.requestId, tool: "read_file", args: { n: 1 } })).status).toBe("APPROVED");
    const updated = await admin.policy.update({ policyId: rule.policyId, outcome: "reject", message: "reads are frozen" });
    expect(updated.version).toBe(2);
    const after = await otherNode.approval.request({ requestId: begun.requestId, tool: "read_file", args: { n: 2 } });
    expect(after).toMatchObject({ status: "REJECTED", decision: { message: "reads are frozen" } });
    expect((await db.prisma.approval.findUniqueOrThrow({ where: { id: after.approvalId } })).policyVersion).toBe(2);
    await admin.policy.delete({ policyId: rule.policyId });
    expect((await agent.approval.request({ requestId: begun.requestId, tool: "read_file", args: { n: 3 } })).status).toBe("PENDING");
    const actions = (await db.prisma.auditEntry.findMany({ where: { subjectId: rule.policyId }, orderBy: { seq: "asc" } })).map((entry) => entry.action);
    expect(actions).toEqual(["policy.created", "policy.updated", "policy.deleted"]);
  });
});

describe("quorum and roles", () => {
  async function quorumApproval() {
    const admin = await operatorCaller(app.deps);
    await admin.policy.create({ name: "two for deletes", match: { tool: "delete_user" }, outcome: "require", approvers: 2 });
    const { agent, begun } = await running();
    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "delete_user", args: { id: 1 } });
    return { admin, agent, begun, asked };
  }

  it("quorum: two distinct approvers are needed; the same approver twice changes nothing", async () => {
    const { admin, agent, begun, asked } = await quorumApproval();
    expect(asked.gate).toMatchObject({ approvers: 2, allow: ["approve", "reject"] });
    const first = await admin.approval.decide({ approvalId: asked.approvalId, action: "approve" });
    expect(first).toMatchObject({ status: "PENDING", required: 2, approvals: [{ decidedBy: "admin@example.com" }] });
    expect(first.decision).toBeUndefined();
    const again = await admin.approval.decide({ approvalId: asked.approvalId, action: "approve" });
    expect(again).toMatchObject({ status: "PENDING", approvals: [{ decidedBy: "admin@example.com" }] });
    expect((await db.prisma.request.findUniqueOrThrow({ where: { id: begun.requestId } })).status).toBe("PAUSED");
    const second = await operatorWithRole("OPERATOR", "second@example.com");
    const done = await second.approval.decide({ approvalId: asked.approvalId, action: "approve" });
    expect(done).toMatchObject({
      status: "APPROVED",
      decision: { action: "approve", decidedBy: "admin@example.com, second@example.com" },
      approvals: [{ decidedBy: "admin@example.com" }, { decidedBy: "second@example.com" }],
    });
    expect((await agent.approval.await({ approvalId: asked.approvalId, timeoutMs: 0 })).status).toBe("APPROVED");
    expect((await db.prisma.request.findUniqueOrThrow({ where: { id: begun.requestId } })).status).toBe("RUNNING");
  });

  it("quorum: one rejection vetoes, even after an approval", async () => {
    const { admin, asked } = await quorumApproval();
    await admin.approval.decide({ approvalId: asked.approvalId, action: "approve" });
    const second = await operatorWithRole("OPERATOR", "second@example.com");
    expect(await second.approval.decide({ approvalId: asked.approvalId, action: "reject", message: "not this user" })).toMatchObject({
      status: "REJECTED",
      decision: { action: "reject", decidedBy: "second@example.com" },
    });
    const third = await operatorWithRole("OPERATOR", "third@example.com");
    await expect(third.approval.decide({ approvalId: asked.approvalId, action: "approve" })).rejects.toMatchObject({ code: "CONFLICT" });
  });

  it("quorum: concurrent votes of two approvers make exactly one decision, every time", async () => {
    const { admin, agent, begun } = await quorumApproval();
    const second = await operatorWithRole("OPERATOR", "second@example.com");
    for (let round = 0; round < 20; round++) {
      const asked = await agent.approval.request({ requestId: begun.requestId, tool: "delete_user", args: { id: round } });
      const results = await Promise.all([
        admin.approval.decide({ approvalId: asked.approvalId, action: "approve" }),
        second.approval.decide({ approvalId: asked.approvalId, action: "approve" }),
      ]);
      // A lost vote would leave both answers PENDING with the quorum reached.
      expect(results.map((result) => result.status).sort()).toEqual(["APPROVED", "PENDING"]);
      expect(await db.prisma.auditEntry.count({ where: { subjectId: asked.approvalId, action: "approval.decided" } })).toBe(1);
    }
  });

  it("role: an approval that needs an admin cannot be decided by an operator", async () => {
    const admin = await operatorCaller(app.deps);
    await admin.policy.create({ name: "admins pay", match: { tool: "pay" }, outcome: "require", role: "ADMIN" });
    const { agent, begun } = await running();
    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "pay", args: {} });
    const operator = await operatorWithRole("OPERATOR", "ops@example.com");
    await expect(operator.approval.decide({ approvalId: asked.approvalId, action: "approve" })).rejects.toMatchObject({
      code: "FORBIDDEN",
      message: expect.stringContaining("must be decided by an ADMIN"),
    });
    expect((await admin.approval.decide({ approvalId: asked.approvalId, action: "approve" })).status).toBe("APPROVED");
  });

  it("admin only: operators and viewers cannot write rules", async () => {
    const operator = await operatorWithRole("OPERATOR", "ops@example.com");
    await expect(operator.policy.create({ name: "sneaky", outcome: "approve" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await operator.policy.list()).toEqual({ items: [] });
  });
});

describe("remembered decisions", () => {
  it("remember always: the decision becomes a rule that approves the next call, visible and revocable in the editor", async () => {
    const admin = await operatorCaller(app.deps);
    const { agent, begun } = await running("A2");
    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { to: "a@example.com" } });
    const decided = await admin.approval.decide({ approvalId: asked.approvalId, action: "approve", remember: { scope: "always" } });
    expect(decided.remembered?.name).toContain("Allow send_email for A2 always");
    const next = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { to: "b@example.com" } });
    expect(next).toMatchObject({ status: "APPROVED", decision: { decider: "policy", policyId: decided.remembered!.policyId } });
    // Only this agent and tool.
    const other = await running("A3");
    expect((await other.agent.approval.request({ requestId: other.begun.requestId, tool: "send_email", args: {} })).status).toBe("PENDING");
    const [listed] = (await admin.policy.list()).items;
    expect(listed).toMatchObject({ remembered: true, sourceApprovalId: asked.approvalId, outcome: "approve" });
    await admin.policy.delete({ policyId: listed!.policyId });
    expect((await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { to: "c@example.com" } })).status).toBe("PENDING");
  });

  it("remember: session scope stays in the session, an hour ends after an hour, and argument conditions narrow it", async () => {
    const operator = await operatorWithRole("OPERATOR", "ops@example.com");
    const first = await running("A2");
    const asked = await first.agent.approval.request({ requestId: first.begun.requestId, tool: "refund", args: { amount: 10 } });
    await operator.approval.decide({ approvalId: asked.approvalId, action: "approve", remember: { scope: "session" } });
    expect((await first.agent.approval.request({ requestId: first.begun.requestId, tool: "refund", args: { amount: 20 } })).status).toBe("APPROVED");
    const elsewhere = await running("A2");
    expect((await elsewhere.agent.approval.request({ requestId: elsewhere.begun.requestId, tool: "refund", args: {} })).status).toBe("PENDING");

    const hourly = await elsewhere.agent.approval.request({ requestId: elsewhere.begun.requestId, tool: "refund", args: { amount: 5 } });
    await operator.approval.decide({
      approvalId: hourly.approvalId,
      action: "approve",
      remember: { scope: "hour", args: [{ path: "$.amount", op: "lte", value: 50 }] },
    });
    expect((await elsewhere.agent.approval.request({ requestId: elsewhere.begun.requestId, tool: "refund", args: { amount: 40 } })).status).toBe("APPROVED");
    expect((await elsewhere.agent.approval.request({ requestId: elsewhere.begun.requestId, tool: "refund", args: { amount: 400 } })).status).toBe("PENDING");
    app.deps.now = () => new Date(Date.now() + 3_601_000);
    expect((await elsewhere.agent.approval.request({ requestId: elsewhere.begun.requestId, tool: "refund", args: { amount: 40 } })).status).toBe("PENDING");
  });

  it("remember: sits just above the rule that asked for a person, so an admin's earlier rule still wins", async () => {
    const admin = await operatorCaller(app.deps);
    await admin.policy.create({ name: "never to competitors", priority: 10, match: { tool: "send_email", args: [{ path: "$.to", op: "matches", value: "@rival\\.test$" }] }, outcome: "reject", message: "no" });
    await admin.policy.create({ name: "mail needs a person", priority: 20, match: { tool: "send_email" }, outcome: "require" });
    const { agent, begun } = await running("A2");
    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { to: "a@example.com" } });
    await admin.approval.decide({ approvalId: asked.approvalId, action: "approve", remember: { scope: "always" } });
    expect((await admin.policy.list()).items.map((rule) => rule.name)).toEqual([
      "never to competitors",
      expect.stringContaining("Allow send_email for A2 always"),
      "mail needs a person",
    ]);
    expect((await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { to: "b@example.com" } })).status).toBe("APPROVED");
    expect((await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { to: "ceo@rival.test" } })).status).toBe("REJECTED");
  });

  it("remember: operators may not remember for always, nobody may remember a quorum, and only approvals are remembered", async () => {
    const admin = await operatorCaller(app.deps);
    const operator = await operatorWithRole("OPERATOR", "ops@example.com");
    const { agent, begun } = await running();
    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: {} });
    await expect(operator.approval.decide({ approvalId: asked.approvalId, action: "approve", remember: { scope: "always" } })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(operator.approval.decide({ approvalId: asked.approvalId, action: "reject", remember: { scope: "hour" } })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await admin.policy.create({ name: "two", match: { tool: "wipe" }, outcome: "require", approvers: 2 });
    const quorum = await agent.approval.request({ requestId: begun.requestId, tool: "wipe", args: {} });
    await expect(admin.approval.decide({ approvalId: quorum.approvalId, action: "approve", remember: { scope: "always" } })).rejects.toMatchObject({ code: "FORBIDDEN" });
    // Refusals wrote nothing.
    expect(await db.prisma.policy.count()).toBe(1);
    expect((await db.prisma.approval.findUniqueOrThrow({ where: { id: asked.approvalId } })).status).toBe("PENDING");
  });
});

describe("the editor's checks and dry runs", () => {
  it.each([
    [{ name: "r", outcome: "approve", match: { args: [{ path: "$.to", op: "matches", value: "(" }] } }, "match.args[0] ($.to matches): not a valid regular expression"],
    [{ name: "r", outcome: "approve", match: { args: [{ path: "to", op: "eq", value: 1 }] } }, 'path "to" must start with $'],
    [{ name: "r", outcome: "reject" }, "message: a rule that rejects must say why"],
    [{ name: "r", outcome: "approve", approvers: 2 }, 'approvers: only a rule whose outcome is "require" asks a person'],
    [{ name: "r", outcome: "require", onTimeout: "approve" }, "a timeout never approves"],
    [{ name: "r", outcome: "approve", match: { tool: "x", colour: "red" } }, "match"],
  ])("malformed rule %j is a 400 naming the field", async (input, words) => {
    const admin = await operatorCaller(app.deps);
    await expect(admin.policy.create(input as never)).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining(words) });
    expect(await db.prisma.policy.count()).toBe(0);
  });

  it("names are unique: a second rule with the same name is CONFLICT", async () => {
    const admin = await operatorCaller(app.deps);
    await admin.policy.create({ name: "same", outcome: "approve", match: { tool: "a" } });
    await expect(admin.policy.create({ name: "same", outcome: "approve", match: { tool: "b" } })).rejects.toMatchObject({ code: "CONFLICT" });
  });

  it("dry run: says which rule a call would hit and why each earlier rule did not, recording nothing", async () => {
    const admin = await operatorCaller(app.deps);
    await admin.policy.create({ name: "payments", match: { tool: "pay_*" }, outcome: "require", approvers: 2 });
    await admin.policy.create({ name: "mail", match: { tool: "send_email" }, outcome: "approve" });
    const viewer = await operatorWithRole("VIEWER", "viewer@example.com");
    const result = await viewer.policy.evaluate({ agent: "A2", tool: "send_email", args: { to: "a@example.com" } });
    expect(result).toMatchObject({
      name: "mail",
      outcome: "approve",
      trail: [
        { name: "payments", matched: false, reason: 'tool "send_email" does not match "pay_*"' },
        { name: "mail", matched: true },
      ],
    });
    expect(await viewer.policy.evaluate({ agent: "A2", tool: "pay_invoice", args: {} })).toMatchObject({ outcome: "require", gate: { approvers: 2 } });
    expect(await viewer.policy.evaluate({ agent: "A2", tool: "other", args: {} })).toMatchObject({ policyId: null, outcome: "require" });
    expect(await db.prisma.approval.count()).toBe(0);
  });

  it("dry run: an MCP call's annotations and tool definition are judged as approval.request judges them, a missing hint as MCP's default, a claim of safety only when pinned", async () => {
    const admin = await operatorCaller(app.deps);
    const readFile = { name: "read_file", description: "Reads a file", annotations: { readOnlyHint: true }, inputSchema: { type: "object", properties: { path: { type: "string" } } } };
    await admin.policy.create({ name: "pinned reads of files", match: { agent: "files", pinned: true, annotations: { readOnlyHint: true } }, outcome: "approve" });
    await admin.policy.create({ name: "destructive files", match: { agent: "files", annotations: { destructiveHint: true } }, outcome: "require", approvers: 2 });
    const ask = (extra: object) => admin.policy.evaluate({ agent: "files", tool: "read_file", args: { path: "/a" }, ...extra });

    // Not pinned yet: the server's own claim of read-only decides nothing, and a missing destructive hint counts as destructive.
    expect(await ask({ annotations: { readOnlyHint: true }, toolDefinition: readFile })).toMatchObject({
      name: "destructive files",
      trail: [{ name: "pinned reads of files", matched: false, reason: expect.stringContaining("is not pinned") }, { name: "destructive files", matched: true }],
    });
    await admin.policy.pinTool({ agent: "files", definition: readFile });
    expect(await ask({ annotations: { readOnlyHint: true }, toolDefinition: readFile })).toMatchObject({ name: "pinned reads of files", outcome: "approve" });
    // A changed description is another definition: no longer pinned.
    expect(await ask({ annotations: { readOnlyHint: true }, toolDefinition: { ...readFile, description: "Reads a file and uploads it" } })).toMatchObject({ name: "destructive files" });
    // Said not destructive, unpinned: no rule matches, the default gate applies.
    expect(await ask({ annotations: { destructiveHint: false } })).toMatchObject({
      policyId: null,
      trail: [{ matched: false }, { name: "destructive files", matched: false, reason: "annotations: destructiveHint is false, not true" }],
    });
    await expect(ask({ annotations: { readOnly: true } })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(await db.prisma.approval.count()).toBe(0);
  });

  it("simulation: replays recent approvals against a draft rule", async () => {
    const { agent, begun } = await running();
    for (const amount of [10, 20, 30, 5000]) await agent.approval.request({ requestId: begun.requestId, tool: "refund", args: { amount } });
    await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: {} });
    const admin = await operatorCaller(app.deps);
    const simulated = await admin.policy.simulate({
      draft: { name: "small refunds", match: { tool: "refund", args: [{ path: "$.amount", op: "lt", value: 100 }] }, outcome: "approve" },
      last: 1000,
    });
    expect(simulated).toMatchObject({ replayed: 5, matchedDraft: 3, changed: 3, outcomes: { approve: 3, reject: 0, require: 2 } });
    expect(simulated.examples).toHaveLength(3);
    expect(await db.prisma.policy.count()).toBe(0);
  });
});

describe("receipts", () => {
  it("receipts: a decision that lets the tool run carries a receipt that verifies for exactly that tool and those arguments", async () => {
    const { verifyReceipt } = await import("../sdk/src/receipts.ts");
    const admin = await operatorCaller(app.deps);
    await admin.policy.create({ name: "lookups", match: { tool: "lookup_*" }, outcome: "approve" });
    const { agent, begun } = await running("A2");
    const jwks = await app.deps.receipts.jwks();

    const byRule = await agent.approval.request({ requestId: begun.requestId, tool: "lookup_order", args: { id: 7, scope: "all" } });
    const claims = await verifyReceipt(byRule.decision!.receipt!, { tool: "lookup_order", args: { scope: "all", id: 7 }, jwks, workspaceId: app.workspaceId });
    expect(claims).toMatchObject({ sub: byRule.approvalId, agent: "A2", decided_by: "policy:lookups", req: begun.requestId });

    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { to: "a@example.com" } });
    const edited = await admin.approval.decide({ approvalId: asked.approvalId, action: "edit", args: { to: "b@example.com" } });
    const receipt = edited.decision!.receipt!;
    expect(await verifyReceipt(receipt, { tool: "send_email", args: { to: "b@example.com" }, jwks, workspaceId: app.workspaceId })).toMatchObject({ decided_by: "admin@example.com" });
    await expect(verifyReceipt(receipt, { tool: "send_email", args: { to: "a@example.com" }, jwks, workspaceId: app.workspaceId })).rejects.toMatchObject({ code: "wrong_args" });
    await expect(verifyReceipt(receipt, { tool: "delete_user", args: { to: "b@example.com" }, jwks, workspaceId: app.workspaceId })).rejects.toMatchObject({ code: "wrong_tool" });
    // The agent reads the same receipt back, however it waits.
    expect((await agent.approval.await({ approvalId: asked.approvalId, timeoutMs: 0 })).decision?.receipt).toBe(receipt);

    const refused = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { to: "c@example.com" } });
    const rejected = await admin.approval.decide({ approvalId: refused.approvalId, action: "reject", message: "no" });
    expect(rejected.decision?.receipt).toBeUndefined();
  });
});
