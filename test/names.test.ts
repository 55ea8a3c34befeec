// Names nobody can disguise, over real HTTP: a reject rule for a tool also
// refuses its look-alikes (case, width, decomposed accents), names hiding
// invisible characters or mixing scripts are refused with the character
// named, the approval keeps the name exactly as the agent sent it, and rules
// stored before names were compared this way are rewritten at start, with the
// admin shown what they were.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../server/domain/ids.ts";
import { AGENT_KEY } from "./harness.ts";
import { operatorClient, type OperatorClient } from "./clients.ts";
import { callHttp, startTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let admin: OperatorClient;
const agent = { authorization: `Bearer ${AGENT_KEY}` };

beforeAll(async () => {
  test = await startTestServer();
  admin = await operatorClient(test.url);
  await admin.policy.create.mutate({ name: "never email", match: { tool: "send_email" }, outcome: "reject", message: "no email from agents" });
  await admin.policy.create.mutate({ name: "no uploads", match: { tool: "résumé_upload" }, outcome: "reject", message: "no uploads" });
  await admin.policy.create.mutate({ name: "billing asks admins", match: { agent: "billing" }, outcome: "require", role: "ADMIN" });
});
afterAll(async () => {
  await test.close();
});

async function begin(agentName = "mailer") {
  const opened = await callHttp(test.url, "session.open", "mutation", {}, agent);
  return callHttp(test.url, "request.begin", "mutation", { sessionId: opened.body.result.data.sessionId, agent: agentName }, agent);
}

async function ask(tool: string, requestId?: string) {
  const id = requestId ?? (await begin()).body.result.data.requestId;
  return { requestId: id, answer: await callHttp(test.url, "approval.request", "mutation", { requestId: id, tool, args: { to: "x@example.com" } }, agent) };
}

describe("look-alike names", () => {
  it.each([
    ["upper case", "SEND_EMAIL"],
    ["mixed case", "Send_Email"],
    ["a fullwidth ｓ", "ｓend_email"],
    ["fullwidth throughout", "ｓｅｎｄ＿ｅｍａｉｌ"],
    ["NFD accents", "re\u0301sume\u0301_upload"],
  ])("names: a reject rule refuses %s, and the approval keeps the name as sent", async (_, tool) => {
    const { answer } = await ask(tool);
    expect(answer.status).toBe(200);
    expect(answer.body.result.data).toMatchObject({ status: "REJECTED", decision: { decidedBy: expect.stringMatching(/^policy:(never email|no uploads)$/) } });
    const shown = await admin.approval.get.query({ approvalId: answer.body.result.data.approvalId });
    expect(shown.tool).toBe(tool);
  });

  it("names: an agent's name is compared the same way (BILLING meets the rule for billing)", async () => {
    const begun = await begin("BILLING");
    const { answer } = await ask("refund", begun.body.result.data.requestId);
    expect(answer.body.result.data.status).toBe("PENDING");
    const shown = await admin.approval.get.query({ approvalId: answer.body.result.data.approvalId });
    expect(shown).toMatchObject({ agent: "BILLING", requiredRole: "ADMIN", policy: { name: "billing asks admins" } });
  });

  it("names: policy.evaluate compares names as approval.request does", async () => {
    expect(await admin.policy.evaluate.query({ agent: "mailer", tool: "SEND_EMAIL", args: {} })).toMatchObject({ name: "never email", outcome: "reject" });
  });

  it.each([
    ["a namespace prefix", "mcp/send_email"],
    ["a trailing dot", "send_email."],
  ])("names: %s is another name, which a rule reaches with a glob", async (_, tool) => {
    const { answer } = await ask(tool);
    expect(answer.body.result.data.status).toBe("PENDING");
  });
});

describe("names nobody can see", () => {
  it("names: a zero-width space in a tool name is 400 naming the character and where, and nothing is written", async () => {
    const { requestId, answer } = await ask("send_\u200bemail");
    expect(answer.status).toBe(400);
    expect(answer.body.error.message).toBe(
      "invalid input: tool: contains U+200B ZERO WIDTH SPACE at position 6, which cannot be seen; names may hold no invisible or control characters",
    );
    expect((await admin.approval.list.query({ requestId })).items).toEqual([]);
  });

  it("names: CR/LF in an agent's name is 400 naming the carriage return", async () => {
    const begun = await begin("mailer\r\nBcc: everyone@example.com");
    expect(begun.status).toBe(400);
    expect(begun.body.error.message).toMatch(/^invalid input: agent: contains U\+000D CARRIAGE RETURN at position 7/);
  });

  it("names: a durable run's agent name is checked as request.begin's is", async () => {
    const opened = await callHttp(test.url, "session.open", "mutation", {}, agent);
    const begun = await callHttp(test.url, "run.begin", "mutation", { runId: "names-run", holder: "p1", sessionId: opened.body.result.data.sessionId, agent: "mailer\r\nBcc: everyone@example.com" }, agent);
    expect(begun.status).toBe(400);
    expect(begun.body.error.message).toMatch(/^invalid input: agent: contains U\+000D CARRIAGE RETURN at position 7/);
  });

  it("names: a rule's glob may hold no invisible character either", async () => {
    await expect(admin.policy.create.mutate({ name: "hidden", match: { tool: "send\u202eemail" }, outcome: "approve" })).rejects.toMatchObject({
      message: expect.stringContaining("match.tool: contains U+202E RIGHT-TO-LEFT OVERRIDE at position 5"),
    });
  });
});

describe("names that mix scripts", () => {
  it("names: a Cyrillic е among Latin letters is 400 naming it, until an admin allows mixed scripts; then it is another name", async () => {
    const lookalike = "s\u0435nd_email";
    const refused = await ask(lookalike);
    expect(refused.answer.status).toBe(400);
    expect(refused.answer.body.error.message).toBe(
      `tool "${lookalike}" mixes scripts (Latin and Cyrillic: U+0435 CYRILLIC SMALL LETTER IE at position 2), as look-alike names do; use one script, or an admin can allow mixed scripts in the workspace's settings`,
    );
    expect((await admin.approval.list.query({ requestId: refused.requestId })).items).toEqual([]);
    const agentRefused = await begin("m\u0430iler");
    expect(agentRefused.status).toBe(400);

    expect(await admin.workspace.settings.query()).toMatchObject({ allowMixedScriptNames: false });
    await admin.workspace.updateSettings.mutate({ allowMixedScriptNames: true });
    try {
      const allowed = await ask(lookalike);
      expect(allowed.answer.body.result.data.status).toBe("PENDING");
      expect((await admin.approval.get.query({ approvalId: allowed.answer.body.result.data.approvalId })).tool).toBe(lookalike);
      const entries = await admin.audit.list.query({});
      expect(entries.items.find((entry: { action: string }) => entry.action === "workspace.settings_changed")).toMatchObject({
        data: { before: { allowMixedScriptNames: false }, after: { allowMixedScriptNames: true } },
      });
    } finally {
      await admin.workspace.updateSettings.mutate({ allowMixedScriptNames: false });
    }
  });
});

describe("rules written before", () => {
  it("names: a stored rule's globs are rewritten at start, audited, and shown with what they were; saving the rule clears the note", async () => {
    const { prisma } = test.server.deps;
    const workspaceId = test.server.bootstrap.workspaceId;
    const id = newId("pol");
    // As an earlier version stored it: a glob in capitals, which matched only capitals.
    await prisma.policy.create({
      data: { id, workspaceId, name: "old capitals", priority: 5, match: { tool: "Delete_*", agent: "ops" }, outcome: "reject", message: "never", allow: [], createdBy: "admin" },
    });
    test = await test.restart();
    admin = await operatorClient(test.url);
    const rewritten = (await admin.policy.list.query()).items.find((policy: { policyId: string }) => policy.policyId === id)!;
    expect(rewritten).toMatchObject({ match: { tool: "delete_*", agent: "ops" }, matchRewrittenFrom: { tool: "Delete_*" }, version: 2 });
    const entries = await admin.audit.list.query({});
    expect(entries.items.find((entry: { action: string; subjectId: string }) => entry.action === "policy.rewritten" && entry.subjectId === id)).toMatchObject({
      data: { before: { tool: "Delete_*" }, after: { tool: "delete_*" } },
    });
    // It now refuses the lower-case name it let through before.
    const begun = await begin("ops");
    const { answer } = await ask("delete_user", begun.body.result.data.requestId);
    expect(answer.body.result.data).toMatchObject({ status: "REJECTED", decision: { decidedBy: "policy:old capitals" } });
    // A second start finds nothing to rewrite.
    test = await test.restart();
    admin = await operatorClient(test.url);
    expect((await admin.policy.list.query()).items.find((policy: { policyId: string }) => policy.policyId === id)).toMatchObject({ version: 2 });
    await admin.policy.update.mutate({ policyId: id, message: "never, ever" });
    expect((await admin.policy.list.query()).items.find((policy: { policyId: string }) => policy.policyId === id)).toMatchObject({ matchRewrittenFrom: null });
  });
});
