// The review screen tells the truth: arguments appear in the order the agent
// sent them, and a call that ran with other arguments than the approved ones
// is flagged in History and on the approval, at desktop and phone widths.
import { expect, test } from "@playwright/test";
import { adminApi, AgentProcess, agentCall, awaitDecision, decisionArmed, finalScreenshot, inboxRow, logIn, requestApproval, sendNow, unique } from "./helpers";

const SQL = { statement: "DELETE FROM users WHERE last_login < now() - interval '2 years'", batchSize: 500, database: "prod", options: { zeta: 1, a: 2 }, dryRun: false, tags: ["gdpr"] };

for (const [label, viewport] of [
  ["desktop", { width: 1280, height: 800 }],
  ["phone", { width: 390, height: 844 }],
] as const) {
  test(`${label}: the arguments read in the agent's order, the statement first`, async ({ page }, testInfo) => {
    await page.setViewportSize(viewport);
    const tool = unique("run_sql");
    const pending = await requestApproval({ tool, args: SQL });
    await logIn(page, undefined, undefined, `/approvals/${pending.approvalId}`);
    const shown = await page.getByLabel("Proposed arguments as JSON").innerText();
    const positions = Object.keys(SQL).map((key) => shown.indexOf(`"${key}"`));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    await finalScreenshot(page, testInfo, `order-${label}`);
    // Nested values collapse (and expand again) from their toggle.
    const tree = page.getByLabel("Proposed arguments as JSON");
    await tree.getByRole("button", { name: "Fold $.options" }).click();
    await expect(tree).not.toContainText('"zeta"');
    await tree.getByRole("button", { name: "Unfold $.options" }).click();
    await expect(tree).toContainText('"zeta"');
  });
}

test("a call that ran with other arguments than the approved ones is flagged in History and on the approval", async ({ page }, testInfo) => {
  const tool = unique("send_email");
  const pending = await requestApproval({ tool, args: { to: "all@example.com", subject: "Hi" } });
  const admin = await adminApi();
  try {
    await admin.call("approval.decide", { approvalId: pending.approvalId, action: "edit", args: { to: "one@example.com", subject: "Hi" } });
  } finally {
    await admin.dispose();
  }
  // The agent ignores the edit and runs what it first proposed.
  await agentCall("approval.reportExecution", { approvalId: pending.approvalId, executedArgs: { to: "all@example.com", subject: "Hi" } });

  await logIn(page, undefined, undefined, "/?tab=history");
  await page.getByLabel("Filter by tool").fill(tool);
  await expect(inboxRow(page, tool).getByTestId("deviation-tag")).toHaveText("ran other args");
  await inboxRow(page, tool).click();
  await expect(page.getByTestId("execution-deviation")).toContainText("ran this tool with arguments other than those approved");
  await page.goto(`/approvals/${pending.approvalId}`);
  await expect(page.getByTestId("execution-deviation")).toBeVisible();
  // The Executed cell that differs from the approval is marked itself; the one that matches is not.
  const table = page.getByRole("table", { name: "Proposed, approved and executed arguments" });
  await expect(table.locator("[data-deviates]")).toHaveCount(1);
  await expect(table.getByRole("row", { name: /^to/ }).locator("[data-deviates]")).toContainText("not what was approved");
  await finalScreenshot(page, testInfo, "deviation");
});

test("the agent's reason reads as Markdown, HTML in it stays text, and the inbox row previews the arguments", async ({ page }, testInfo) => {
  const tool = unique("refund");
  const pending = await requestApproval({
    tool,
    args: { amount: 42, to: "alan.turing@example.com" },
    reason: 'Refund **$42** to the customer:\n\n- order 1001\n- <img src=x onerror="window.__pwned=1">',
  });
  await logIn(page, undefined, undefined, `/?approval=${pending.approvalId}`);
  // The tab's title says how many approvals wait.
  await expect(page).toHaveTitle(/^\(\d+\) /);
  await expect(inboxRow(page, tool).getByTestId("args-preview")).toHaveText("amount: 42 · to: alan.turing@example.com");
  // Filters match substrings in any case.
  await page.getByLabel("Filter by tool").fill(tool.slice(2, 9).toUpperCase());
  await expect(inboxRow(page, tool)).toBeVisible();
  const reason = page.getByTestId("reason");
  await expect(reason.locator("strong")).toHaveText("$42");
  await expect(reason.locator("li")).toHaveCount(2);
  await expect(reason.locator("img")).toHaveCount(0);
  expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  await finalScreenshot(page, testInfo, "markdown-reason");
});

test("when the agent process dies, its approval says no agent is waiting, and its task can be canceled from there", async ({ page }, testInfo) => {
  const tool = unique("charge_card");
  const agent = new AgentProcess({ AGENT_TOOL: tool, AGENT_ARGS: JSON.stringify({ amount: 12 }) });
  const requested = await agent.next("approval-requested");
  try {
    await logIn(page, undefined, undefined, `/approvals/${requested.approvalId}`);
    await expect(page.getByRole("heading", { name: tool })).toBeVisible();
    // While the agent polls, nothing is said.
    await page.waitForTimeout(6_000);
    await expect(page.getByTestId("agent-gone")).toHaveCount(0);
  } finally {
    agent.stop();
  }
  await expect(page.getByTestId("agent-gone")).toContainText("No agent has been waiting since", { timeout: 15_000 });
  // The inbox row says so too, once the list is read again.
  await page.goto(`/?tool=${tool}`);
  await expect(page.getByTestId("agent-gone-tag")).toHaveText("no agent waiting");
  await page.goto(`/approvals/${requested.approvalId}`);
  await finalScreenshot(page, testInfo, "agent-gone");
  const gone = page.getByTestId("agent-gone");
  await gone.getByRole("button", { name: /^Cancel A2's task/ }).click();
  // A reason is asked for, and only A2's own task is canceled unless a parent is chosen.
  await expect(gone.getByRole("button", { name: "Cancel the task" })).toBeDisabled();
  await expect(gone.getByRole("radio", { name: /^Only A2's task/ })).toBeChecked();
  await gone.getByLabel(/^Why/).fill("the agent's process was stopped");
  await finalScreenshot(page, testInfo, "cancel-reason");
  await gone.getByRole("button", { name: "Cancel the task" }).click();
  // Who canceled, when, and why.
  await expect(page.getByTestId("decision-banner")).toContainText(`Canceled by you (admin@example.com)`);
  await expect(page.getByTestId("decision-banner")).toContainText("Reason: the agent's process was stopped");
  await finalScreenshot(page, testInfo, "canceled");
  // History names who canceled it.
  await page.goto(`/?tab=history&tool=${tool}`);
  await expect(page.getByRole("button", { name: `Open ${tool} by A2` })).toContainText("canceled by admin@example.com");
});

test("a half-written rejection survives a reload, and when someone else decides first the operator is told it was not sent", async ({ page }, testInfo) => {
  const tool = unique("drop_table");
  const pending = await requestApproval({ tool });
  await logIn(page, undefined, undefined, `/?approval=${pending.approvalId}`);
  await page.getByRole("button", { name: /^Reject/ }).click();
  const message = page.getByLabel("Message to the agent (why it is rejected)");
  await message.fill("Not on a Friday");
  await page.reload();
  await expect(page.getByLabel("Message to the agent (why it is rejected)")).toHaveValue("Not on a Friday");

  const admin = await adminApi();
  try {
    await admin.call("approval.decide", { approvalId: pending.approvalId, action: "approve" });
  } finally {
    await admin.dispose();
  }
  await expect(page.getByTestId("unsent-draft")).toContainText("Your draft was not sent");
  await expect(page.getByTestId("unsent-draft")).toContainText("rejection message: Not on a Friday");
  await finalScreenshot(page, testInfo, "unsent-draft");
  await page.getByRole("button", { name: "Discard draft" }).click();
  await expect(page.getByTestId("unsent-draft")).toHaveCount(0);
});

// The headless shell has no desktop notifications: this one runs in the full browser.
test("desktop alerts, once turned on, raise a system notification for a new approval", { tag: "@full-browser" }, async ({ page, context }) => {
  await context.grantPermissions(["notifications"]);
  // Records each notification the page raises (the real constructor still runs).
  await page.addInitScript(() => {
    const Real = window.Notification;
    const shown: string[] = [];
    (window as unknown as { shownNotifications: string[] }).shownNotifications = shown;
    class Recording extends Real {
      constructor(title: string, options?: NotificationOptions) {
        super(title, options);
        shown.push(title);
      }
    }
    Object.defineProperty(Recording, "permission", { get: () => Real.permission });
    Recording.requestPermission = Real.requestPermission.bind(Real);
    window.Notification = Recording as typeof Notification;
  });
  await logIn(page);
  await page.getByRole("button", { name: /^Desktop alerts: off/ }).click();
  await expect(page.getByRole("button", { name: "Desktop alerts: on" })).toHaveAttribute("aria-pressed", "true");
  const tool = unique("wire_money");
  await requestApproval({ tool });
  await expect.poll(() => page.evaluate(() => (window as unknown as { shownNotifications: string[] }).shownNotifications)).toContain(`Approval needed: ${tool}`);
});

test("on a phone: the list, then the approval, then the decision, and back to the list, with no sideways scrolling", async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 390, height: 844 });
  const tool = unique("phone_tool");
  const pending = await requestApproval({ tool, args: { to: "a@example.com", note: "x".repeat(200) } });
  await logIn(page);
  await page.getByLabel("Filter by tool").fill(tool);
  await expect(page.getByRole("list", { name: "Pending approvals" }).getByRole("listitem")).toHaveCount(1);
  await expect(page.getByRole("region", { name: "Approval detail" })).toBeHidden();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await finalScreenshot(page, testInfo, "phone-list");
  await inboxRow(page, tool).click();
  await expect(page.getByRole("region", { name: "Approvals" })).toBeHidden();
  const detail = page.getByRole("region", { name: "Approval detail" });
  await expect(detail.getByLabel("Proposed arguments as JSON")).toContainText('"a@example.com"');
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await finalScreenshot(page, testInfo, "phone-detail");
  await detail.getByRole("button", { name: /^Approve a$/ }).click();
  await sendNow(page);
  await expect(page.getByTestId("decision-banner")).toContainText("Approved by you");
  expect((await agentCall<{ status: string }>("approval.await", { approvalId: pending.approvalId, timeoutMs: 0 }, "GET")).status).toBe("APPROVED");
  await detail.getByRole("button", { name: "← All approvals" }).click();
  await expect(page.getByRole("region", { name: "Approvals" })).toBeVisible();
});

for (const [label, viewport] of [
  ["1280", { width: 1280, height: 800 }],
  ["1024", { width: 1024, height: 768 }],
  ["phone", { width: 390, height: 844 }],
] as const) {
  test(`${label}: searching finds an approval by its argument text or its session's title, and the search survives a reload`, async ({ page }, testInfo) => {
    await page.setViewportSize(viewport);
    const marker = unique("Invoices");
    const title = unique("Quarter close");
    const wanted = await requestApproval({ tool: unique("run_sql"), args: { statement: `DELETE FROM ${marker} WHERE paid`, database: "prod" } });
    await requestApproval({ tool: unique("run_sql"), args: { statement: "SELECT 1" }, title });
    await logIn(page);
    const list = page.getByRole("list", { name: "Pending approvals" });

    await page.getByLabel("Search arguments, sessions and reasons").fill(`delete from ${marker.toLowerCase()}`);
    await expect(list.getByRole("listitem")).toHaveCount(1);
    await expect(list).toContainText(marker);
    await expect(page).toHaveURL(/[?&]q=delete/);
    await page.reload();
    await expect(page.getByLabel("Search arguments, sessions and reasons")).toHaveValue(`delete from ${marker.toLowerCase()}`);
    await expect(list.getByRole("listitem")).toHaveCount(1);
    await list.getByRole("button", { name: /^Open run_sql/ }).click();
    await expect(page).toHaveURL(new RegExp(`approval=${wanted.approvalId}`));

    if (label === "phone") await page.getByRole("button", { name: "← All approvals" }).click();
    await page.getByLabel("Search arguments, sessions and reasons").fill(title.toUpperCase());
    await expect(list.getByRole("listitem")).toHaveCount(1);
    await expect(list).toContainText(title);
    // Nothing is clipped: the page never scrolls sideways.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
    await finalScreenshot(page, testInfo, `search-${label}`);
  });
}

test("edits: one field per argument, a long email body as lines of text, each value keeping its type and place, checked against the pinned tool's input schema", async ({ page }, testInfo) => {
  const tool = unique("send_email");
  const body = "Hello Dana,\n\nthe drafts of last week are purged.\nNothing else was touched.\n\nRegards,\nthe janitor";
  const proposed = { to: "dana@example.com", subject: "Drafts purged", body, copies: 3, urgent: false, tags: ["ops"] };
  const admin = await adminApi();
  await admin.call("policy.pinTool", {
    agent: "billing-agent",
    definition: {
      name: tool,
      inputSchema: {
        type: "object",
        properties: { to: { type: "string" }, subject: { type: "string" }, body: { type: "string" }, copies: { type: "integer", maximum: 5 }, urgent: { type: "boolean" }, tags: { type: "array", items: { type: "string" } } },
        required: ["to", "body"],
        additionalProperties: false,
      },
    },
  });
  await admin.dispose();
  const pending = await requestApproval({ tool, args: proposed });
  await page.setViewportSize({ width: 1440, height: 900 });
  await logIn(page, undefined, undefined, `/approvals/${pending.approvalId}`);
  const detail = page.getByRole("main");
  await decisionArmed(page);
  await detail.getByRole("button", { name: /^Edit arguments/ }).click();
  const form = detail.getByRole("form", { name: "Edit the arguments" });
  await expect(form.getByTestId("edit-schema-note")).toContainText("Checked against the input schema");
  // The agent's order, one field each; the body is lines of text, not one string with \n in it.
  await expect(form.getByTestId("edit-fields").locator("label > span:first-child")).toHaveText(Object.keys(proposed));
  const bodyField = form.getByLabel(/^body/);
  expect(await bodyField.evaluate((element) => element.tagName)).toBe("TEXTAREA");
  await expect(bodyField).toHaveValue(body);

  // What the schema refuses is named, and nothing can be sent.
  await form.getByLabel(/^copies/).fill("12");
  await expect(form.getByRole("alert")).toContainText("copies (must be at most 5)");
  await expect(form.getByRole("button", { name: "Approve with edits" })).toBeDisabled();
  await form.getByLabel(/^copies/).fill("2");
  await bodyField.fill("Hello Dana,\n\nthe drafts are purged.\n\nRegards");
  await form.getByLabel(/^urgent/).selectOption("true");
  await expect(form.getByRole("button", { name: "Approve with edits" })).toBeEnabled();
  await finalScreenshot(page, testInfo, "edit-fields-1440x900");
  await page.setViewportSize({ width: 390, height: 844 });
  await bodyField.scrollIntoViewIfNeeded();
  await finalScreenshot(page, testInfo, "edit-fields-390x844");

  await form.getByRole("button", { name: "Approve with edits" }).click();
  await sendNow(page);
  const decided = await awaitDecision(pending.approvalId);
  const expected = { ...proposed, copies: 2, urgent: true, body: "Hello Dana,\n\nthe drafts are purged.\n\nRegards" };
  expect(decided.decision?.args).toEqual(expected);
  expect(Object.keys(decided.decision?.args as object)).toEqual(Object.keys(proposed));
});
