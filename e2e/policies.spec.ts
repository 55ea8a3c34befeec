// The Policies page in the browser: an admin writes a rule, dry-runs a call
// against it, watches an agent's call be approved by it, meets the editor's
// checks, deletes it and sees the next call wait for a person again. Operators
// read the same page without the controls; the page fits a phone.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { adminApi, awaitDecision, createOperator, finalScreenshot, inboxRow, logIn, requestApproval, unique } from "./helpers";

const RULE = "auto-approve read_* for agent demo";

const editor = (page: Page) => page.getByRole("region", { name: /^(New rule|Edit rule)/ });
const ruleCard = (page: Page, name: string) => page.getByRole("article", { name: `Rule ${name}` });

async function removeRule(name: string) {
  const admin = await adminApi();
  try {
    const rule = (await admin.rules()).find((candidate) => candidate.name === name);
    if (rule) await admin.call("policy.delete", { policyId: rule.policyId });
  } finally {
    await admin.dispose();
  }
}

async function dryRun(page: Page, agent: string, tool: string, args: string) {
  const box = page.getByRole("region", { name: "Dry run" });
  await box.getByLabel("Agent", { exact: true }).fill(agent);
  await box.getByLabel("Tool", { exact: true }).fill(tool);
  await box.getByLabel("Arguments (JSON)").fill(args);
  await box.getByRole("button", { name: "Dry run" }).click();
  return box;
}

test.afterEach(async () => removeRule(RULE));

test("an admin's rule approves an agent's call, explains itself in a dry run, refuses bad input, and once deleted the next call waits for a person", async ({ page }, testInfo) => {
  await logIn(page, undefined, undefined, "/policies");
  await expect(page.getByRole("heading", { name: "Policies" })).toBeVisible();
  await expect(page.getByRole("link", { name: "Policies" })).toHaveAttribute("aria-current", "page");

  // Write the rule in the editor, and see what it would have done first.
  await page.getByRole("button", { name: "New rule" }).click();
  await editor(page).getByLabel("Name").fill(RULE);
  await editor(page).getByLabel("Agent (glob)").fill("demo");
  await editor(page).getByLabel("Tool (glob)").fill("read_*");
  await editor(page).getByRole("radio", { name: /Auto-approve/ }).check();
  await editor(page).getByRole("button", { name: "Simulate over last 1000 approvals" }).click();
  await expect(editor(page).getByRole("region", { name: "Simulation" }).getByRole("status")).toContainText(/of the last \d+ approvals|no approvals yet/);
  await editor(page).getByRole("button", { name: "Create rule" }).click();
  await expect(page.getByRole("status").filter({ hasText: `Saved rule “${RULE}”` })).toBeVisible();
  const card = ruleCard(page, RULE);
  await expect(card).toContainText("Auto-approve");
  await expect(card).toContainText("agent demo");
  await expect(card).toContainText("tool read_*");
  await expect(card).toContainText("Version 1");

  // The dry run names the rule that decides, and why.
  const box = await dryRun(page, "demo", "read_invoice", '{"invoiceId": 7}');
  const result = box.getByRole("status", { name: "Dry run result" });
  await expect(result).toContainText(`Approved automatically by the rule “${RULE}”`);
  await expect(result.getByRole("list", { name: "Explanation" })).toContainText(`✓ matched “${RULE}”: matches agent demo, tool read_*`);
  // Another agent is not matched, and the trail says why.
  await dryRun(page, "billing-agent", "read_invoice", "{}");
  await expect(result).toContainText(`✗ skipped “${RULE}”: agent "billing-agent" does not match "demo"`);
  await expect(result).toContainText("A person decides, set by the workspace default");

  // A real agent's call over HTTP: approved at once by the rule.
  const tool = unique("read_report");
  const approved = await requestApproval({ tool, agent: "demo", args: { report: "q3" } });
  const decided = await awaitDecision(approved.approvalId, 0);
  expect(decided).toMatchObject({ status: "APPROVED", decision: { action: "approve", decidedBy: `policy:${RULE}` } });
  await page.goto("/?tab=history");
  const row = inboxRow(page, tool, "demo");
  await expect(row).toContainText(`policy:${RULE}`);
  await row.click();
  await expect(page.getByTestId("decision-banner")).toContainText(`Approved automatically by the rule "${RULE}" (version 1)`);
  await finalScreenshot(page, testInfo, "approved-by-rule");

  // The editor refuses a bad regular expression and a bad JSON path before anything is sent.
  await page.goto("/policies");
  await ruleCard(page, RULE).getByRole("button", { name: `Edit ${RULE}` }).click();
  await expect(editor(page).getByRole("heading", { name: `Edit rule “${RULE}” (version 1)` })).toBeFocused();
  await editor(page).getByRole("button", { name: "Add argument condition" }).click();
  await editor(page).getByLabel("argument condition 1: JSON path").fill("$.path");
  await editor(page).getByLabel("argument condition 1: operator").selectOption("matches");
  await editor(page).getByLabel("argument condition 1: value").fill("^/reports/(");
  await editor(page).getByRole("button", { name: "Save changes" }).click();
  await expect(editor(page).getByRole("alert")).toContainText("Nothing was saved");
  const conditionError = editor(page).getByTestId("args-condition").getByTestId("field-error");
  await expect(conditionError).toContainText("not a valid regular expression");
  await expect(editor(page).getByLabel("argument condition 1: value")).toHaveAttribute("aria-invalid", "true");
  await editor(page).getByLabel("argument condition 1: value").fill("^/reports/");
  await editor(page).getByLabel("argument condition 1: JSON path").fill("path");
  await editor(page).getByRole("button", { name: "Save changes" }).click();
  await expect(conditionError).toContainText('path "path" must start with $');
  await finalScreenshot(page, testInfo, "editor-errors");
  // Fixed, it saves as version 2.
  await editor(page).getByLabel("argument condition 1: JSON path").fill("$.report");
  await editor(page).getByLabel("argument condition 1: operator").selectOption("exists");
  await editor(page).getByRole("button", { name: "Save changes" }).click();
  await expect(ruleCard(page, RULE)).toContainText("Version 2");
  await expect(ruleCard(page, RULE)).toContainText("argument $.report is present");

  // Delete, after confirming; the next call waits for a person.
  await ruleCard(page, RULE).getByRole("button", { name: `Delete ${RULE}` }).click();
  await page.getByRole("alertdialog", { name: `Delete ${RULE}?` }).getByRole("button", { name: "Delete rule" }).click();
  await expect(ruleCard(page, RULE)).toHaveCount(0);
  const next = await requestApproval({ tool: unique("read_report"), agent: "demo", args: { report: "q4" } });
  expect((await awaitDecision(next.approvalId, 0)).status).toBe("PENDING");
});

test("a name already taken is refused by the server and shown next to the name field", async ({ page }) => {
  const admin = await adminApi();
  try {
    await admin.call("policy.create", { name: RULE, match: { agent: "demo", tool: "read_*" }, outcome: "approve" });
  } finally {
    await admin.dispose();
  }
  await logIn(page, undefined, undefined, "/policies");
  await page.getByRole("button", { name: "New rule" }).click();
  await editor(page).getByLabel("Name").fill(RULE);
  await editor(page).getByRole("button", { name: "Create rule" }).click();
  await expect(editor(page).getByLabel("Name")).toHaveAttribute("aria-invalid", "true");
  await expect(editor(page).getByTestId("field-error").first()).toContainText(`a rule named "${RULE}" already exists`);
});

test("an admin sets the workspace default gate: a timeout after which undecided approvals fail closed", async ({ page }) => {
  await logIn(page, undefined, undefined, "/policies");
  const gate = page.getByRole("form", { name: "Workspace default gate" });
  try {
    await gate.getByLabel("Default timeout", { exact: true }).fill("soon");
    await gate.getByRole("button", { name: "Save default" }).click();
    await expect(gate.getByTestId("field-error")).toContainText('"soon" is not a positive number');
    await gate.getByLabel("Default timeout", { exact: true }).fill("15");
    await gate.getByLabel("Default timeout unit").selectOption("m");
    await gate.getByLabel("Then (fail closed)").selectOption("cancel");
    await gate.getByRole("button", { name: "Save default" }).click();
    await expect(page.getByTestId("default-gate")).toContainText("after 15m 00s an undecided approval is canceled");
    const box = await dryRun(page, "anyone", "anything", "{}");
    await expect(box.getByRole("status", { name: "Dry run result" })).toContainText("after 15m 00s it is canceled");
  } finally {
    const admin = await adminApi();
    await admin.call("policy.setDefaults", { timeoutMs: null, onTimeout: "reject" });
    await admin.dispose();
  }
});

test("an operator reads the rules and dry-runs a call, without controls to change them", async ({ page }) => {
  const admin = await adminApi();
  try {
    await admin.call("policy.create", { name: RULE, match: { agent: "demo", tool: "read_*" }, outcome: "approve" });
  } finally {
    await admin.dispose();
  }
  const operator = await createOperator("OPERATOR");
  await logIn(page, operator.email, operator.password, "/policies");
  await expect(page.getByTestId("read-only-notice")).toContainText("Read only: you are signed in as operator");
  await expect(ruleCard(page, RULE)).toBeVisible();
  await expect(page.getByRole("button", { name: "New rule" })).toHaveCount(0);
  await expect(ruleCard(page, RULE).getByRole("button")).toHaveCount(0);
  await expect(page.getByRole("form", { name: "Workspace default gate" })).toHaveCount(0);
  const box = await dryRun(page, "demo", "read_x", "{not json");
  await expect(box.getByTestId("field-error")).toContainText("not valid JSON");
  await dryRun(page, "demo", "read_x", "{}");
  await expect(box.getByRole("status", { name: "Dry run result" })).toContainText(`Approved automatically by the rule “${RULE}”`);
});

test("the page fits a desktop and a phone: list, editor and dry-run result, with no sideways scrolling", async ({ page }, testInfo) => {
  const admin = await adminApi();
  const names = [RULE, unique("big refunds need two admins"), unique("no mail outside example.com")];
  try {
    await admin.call("policy.create", { name: names[0], match: { agent: "demo", tool: "read_*" }, outcome: "approve" });
    await admin.call("policy.create", {
      name: names[1],
      match: { tool: "refund", args: [{ path: "$.amount", op: "gt", value: 1000 }] },
      outcome: "require",
      role: "ADMIN",
      approvers: 2,
      timeoutMs: 3_600_000,
      onTimeout: "cancel",
    });
    await admin.call("policy.create", {
      name: names[2],
      match: { tool: "send_email", args: [{ path: "$.to", op: "matches", value: "@example\\.com$" }] },
      outcome: "reject",
      message: "mail may only go to example.com",
      enabled: false,
    });
    // A decision remembered for an hour from an approval: the list shows where it came from and when it ends.
    const asked = await requestApproval({ tool: unique("lookup_customer"), args: { customerId: 7 } });
    const remembered = await admin.call<{ remembered?: { policyId: string; name: string } }>("approval.decide", {
      approvalId: asked.approvalId,
      action: "approve",
      remember: { scope: "hour" },
    });
    names.push(remembered.remembered!.name);
    const dir = process.env.TOLLGATE_SHOTS_DIR;
    if (dir) mkdirSync(dir, { recursive: true });
    const shot = async (name: string) => {
      const body = await page.screenshot({ fullPage: true });
      await testInfo.attach(name, { body, contentType: "image/png" });
      if (dir) await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
    };
    const fits = async () => expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);

    await logIn(page, undefined, undefined, "/policies");
    for (const [width, height] of [
      [1280, 800],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width, height });
      await page.goto("/policies");
      await expect(ruleCard(page, names[2]!)).toContainText("Disabled");
      const rememberedCard = ruleCard(page, names[3]!);
      await expect(rememberedCard).toContainText("Remembered");
      await expect(rememberedCard).toContainText(`remembered from approval ${asked.approvalId}`);
      await expect(rememberedCard).toContainText(/expires \d{4}-\d\d-\d\d \d\d:\d\d/);
      await fits();
      await shot(`policies-list-${width}`);
      await ruleCard(page, names[1]!).getByRole("button", { name: `Edit ${names[1]}` }).click();
      await expect(editor(page)).toBeVisible();
      await fits();
      await shot(`policies-editor-${width}`);
      await editor(page).getByRole("button", { name: "Cancel" }).click();
      const box = await dryRun(page, "billing-agent", "refund", '{"amount": 5000}');
      await expect(box.getByRole("status", { name: "Dry run result" })).toContainText("A person decides");
      await box.scrollIntoViewIfNeeded();
      await fits();
      await shot(`policies-dry-run-${width}`);
    }
    // Saving a remembered rule unchanged keeps it where it was (after every written rule) and its expiry.
    const expiry = /expires [\d-]+ [\d:]+/.exec((await ruleCard(page, names[3]!).textContent()) ?? "")![0];
    await ruleCard(page, names[3]!).getByRole("button", { name: `Edit ${names[3]}` }).click();
    await editor(page).getByRole("button", { name: "Save changes" }).click();
    await expect(ruleCard(page, names[3]!)).toContainText("Version 2 · after all written rules");
    await expect(ruleCard(page, names[3]!)).toContainText(expiry);
  } finally {
    for (const name of names) await removeRule(name);
    await admin.dispose();
  }
});
