// The approval inbox end to end: agents ask (as a separate process or over HTTP
// from the test), operators decide in the browser, and the agent side sees the
// decision. Every test uses its own tool names or session and opens the inbox
// filtered to them: earlier tests leave approvals waiting, and in a long list a
// new row can sit below the fold, outside the virtualized list's rendered rows.
import { expect, test, type Page } from "@playwright/test";
import { ADMIN_EMAIL, BASE_URL } from "./fixtures";
import { AgentProcess, awaitDecision, createOperator, decisionArmed, finalScreenshot, inboxRow, logIn, requestApproval, sendNow, unique } from "./helpers";

const detail = (page: Page) => page.getByRole("region", { name: "Approval detail" });
const approveButton = (page: Page) => detail(page).getByRole("button", { name: /^Approve a$/ });

test("an agent's request reaches the inbox within a second; approving resumes the agent and the tree goes PAUSED, RUNNING, COMPLETED", async ({ page, context }, testInfo) => {
  const tool = unique("book_flight");
  await logIn(page, undefined, undefined, `/?tool=${tool}`);
  const agent = new AgentProcess({ AGENT_TOOL: tool, AGENT_SESSION_TITLE: unique("Trip"), AGENT_ARGS: JSON.stringify({ flight: "LH123", seats: 2 }) });
  try {
    const requested = await agent.next("approval-requested");
    // Live, without a reload: socket.io push, then refetch.
    await expect(inboxRow(page, tool, "A2")).toBeVisible({ timeout: 1_000 });

    const tree = await context.newPage();
    await tree.goto(`/sessions/${requested.sessionId}`);
    const o1 = tree.getByRole("treeitem", { name: /^Orchestrator O1/ });
    const a1 = tree.getByRole("treeitem", { name: /^Agent A1/ });
    const a2 = tree.getByRole("treeitem", { name: /^Agent A2/ });
    await expect(o1).toHaveAttribute("aria-label", "Orchestrator O1, PAUSED, on the paused path");
    await expect(a2).toHaveAttribute("aria-label", "Agent A2, PAUSED, waiting for approval");
    await expect(a1).toHaveAttribute("aria-label", "Agent A1, COMPLETED");
    await expect(o1).toContainText("follow-on #1");
    await expect(a2.getByRole("link", { name: /waiting for approval/ })).toHaveAttribute("href", `/?approval=${requested.approvalId}`);

    await inboxRow(page, tool, "A2").click();
    await expect(detail(page).getByRole("list", { name: /Call chain/ })).toContainText("O1");
    await expect(detail(page).getByRole("list", { name: /Call chain/ })).toContainText("A2");
    await expect(detail(page).getByLabel("Proposed arguments as JSON")).toContainText('"LH123"');
    await approveButton(page).click();
    await sendNow(page);

    const decided = await agent.next("decided", 5_000);
    expect(decided.status).toBe("APPROVED");
    // The inbox moves on to the next approval; the status line says what was decided.
    await expect(page.getByTestId("inbox-status")).toHaveText(`You approved ${tool} for A2.`);
    await expect(a2).toHaveAttribute("aria-label", "Agent A2, RUNNING");
    await expect(o1).toHaveAttribute("aria-label", "Orchestrator O1, RUNNING");

    agent.finish();
    await agent.next("completed");
    await expect(a2).toHaveAttribute("aria-label", "Agent A2, COMPLETED");
    await expect(o1).toHaveAttribute("aria-label", "Orchestrator O1, COMPLETED");
    await a2.click();
    await expect(tree.getByRole("region", { name: "Task detail" })).toContainText("tool.executed");
    await finalScreenshot(page, testInfo, "inbox-approved");
    await finalScreenshot(tree, testInfo, "tree-completed");
  } finally {
    agent.stop();
  }
});

test("two operators see one approval; one approves, the other sees it live, and a late click says who decided", async ({ page, browser }, testInfo) => {
  const other = await createOperator("OPERATOR");
  const tools = [unique("refund"), unique("refund_again")];
  const first = await requestApproval({ tool: tools[0]! });
  const second = await requestApproval({ tool: tools[1]!, sessionId: first.sessionId });

  // Operator B's live updates go through a proxy the test can hold, to make a late click.
  const contextB = await browser.newContext();
  let holdEvents = false;
  await contextB.routeWebSocket(/\/socket\.io\//, (ws) => {
    const server = ws.connectToServer();
    server.onMessage((message) => {
      if (holdEvents && typeof message === "string" && message.startsWith("42")) return;
      ws.send(message);
    });
  });
  // So are its reads: the open approval looks again every 5 s while it is
  // pending, and on a busy machine A's rejection can take longer than that, so
  // B's screen would hear of it before the late click this test makes.
  let releaseReads!: () => void;
  const readsReleased = new Promise<void>((resolve) => (releaseReads = resolve));
  await contextB.route(/\/api\/trpc\/[^?]*approval\.get/, async (route) => {
    if (holdEvents) await readsReleased;
    await route.continue();
  });
  const pageB = await contextB.newPage();
  try {
    await logIn(page, undefined, undefined, `/?session=${first.sessionId}`);
    await logIn(pageB, other.email, other.password, `/?session=${first.sessionId}`);

    // Both open the first approval; A approves; B sees it decided live.
    await inboxRow(page, tools[0]!).click();
    await inboxRow(pageB, tools[0]!).click();
    await expect(approveButton(pageB)).toBeVisible();
    await approveButton(page).click();
    await sendNow(page);
    await expect(pageB.getByTestId("decision-banner")).toContainText(`Approved by ${ADMIN_EMAIL}`);
    await expect(approveButton(pageB)).toHaveCount(0);
    // B's list holds still while B has it open: the row stays, marked.
    await expect(inboxRow(pageB, tools[0]!).getByTestId("row-state")).toHaveText("no longer waiting");

    // The second: B's screen has not heard yet when A rejects; B's late approve says who decided.
    await inboxRow(page, tools[1]!).click();
    await inboxRow(pageB, tools[1]!).click();
    await expect(approveButton(pageB)).toBeVisible();
    holdEvents = true;
    await decisionArmed(page);
    await page.keyboard.press("r");
    await page.getByLabel("Message to the agent (why it is rejected)").fill("Refunds are frozen today");
    await detail(page).getByRole("button", { name: "Reject", exact: true }).click();
    await sendNow(page);
    await expect(page.getByTestId("inbox-status")).toHaveText(`You rejected ${tools[1]} for billing-agent.`);
    expect((await awaitDecision(second.approvalId, 0)).status).toBe("REJECTED");
    await expect(approveButton(pageB)).toBeVisible();
    await approveButton(pageB).click();
    await sendNow(pageB);
    await expect(pageB.getByTestId("decision-toast")).toHaveAttribute("data-state", "late");
    await expect(pageB.getByTestId("decision-toast")).toContainText(new RegExp(`^Already rejected by ${ADMIN_EMAIL.replace(".", "\\.")} at .+: your decision on ${tools[1]} for billing-agent was not recorded\\.`));
    holdEvents = false;
    releaseReads();
    await pageB.goto(`/approvals/${second.approvalId}`);
    await expect(pageB.getByTestId("decision-banner")).toContainText(`Rejected by ${ADMIN_EMAIL}`);
    await expect(pageB.getByRole("alert").filter({ hasText: /error/i })).toHaveCount(0);
    await finalScreenshot(pageB, testInfo, "late-click");
  } finally {
    await contextB.close();
  }
});

test("reject with a message and respond with an answer reach the agent; the history tab shows who decided", async ({ page }, testInfo) => {
  const rejectTool = unique("delete_user");
  const respondTool = unique("ask_manager");
  const rejected = await requestApproval({ tool: rejectTool, title: unique("Decisions") });
  const answered = await requestApproval({ tool: respondTool, sessionId: rejected.sessionId });
  await logIn(page, undefined, undefined, `/?session=${rejected.sessionId}`);

  await inboxRow(page, rejectTool).click();
  await decisionArmed(page);
  await page.keyboard.press("r");
  const message = page.getByLabel("Message to the agent (why it is rejected)");
  await expect(message).toBeFocused();
  await message.fill("Not during the change freeze");
  await message.press("Control+Enter");
  await sendNow(page);
  await expect(page.getByTestId("inbox-status")).toHaveText(`You rejected ${rejectTool} for billing-agent.`);
  const rejection = await awaitDecision(rejected.approvalId);
  expect(rejection).toMatchObject({ status: "REJECTED", decision: { action: "reject", message: "Not during the change freeze", decidedBy: ADMIN_EMAIL } });

  await inboxRow(page, respondTool).click();
  await detail(page).getByRole("button", { name: "Respond instead…" }).click();
  const send = detail(page).getByRole("button", { name: "Send answer" });
  await expect(send).toBeDisabled();
  await page.getByLabel("Answer returned to the agent (the tool does not run)").fill("Use the cached org chart instead");
  await send.click();
  await sendNow(page);
  await expect(page.getByTestId("inbox-status")).toHaveText(`You answered ${respondTool} for billing-agent.`);
  const response = await awaitDecision(answered.approvalId);
  expect(response).toMatchObject({ status: "REJECTED", decision: { action: "respond", message: "Use the cached org chart instead" } });

  await page.getByRole("tab", { name: "History" }).click();
  // An answer is its own outcome, never shown under a red REJECTED badge.
  await page.getByLabel("Filter by tool").fill(respondTool);
  await expect(inboxRow(page, respondTool).locator("[data-status]")).toHaveText("ANSWERED");
  await expect(inboxRow(page, respondTool)).toContainText(`Answered instead by ${ADMIN_EMAIL}`);
  await page.getByLabel("Filter by tool").fill(rejectTool);
  await expect(page.getByRole("list", { name: "Decided approvals" }).getByRole("listitem")).toHaveCount(1);
  const row = inboxRow(page, rejectTool);
  await expect(row).toContainText(`Rejected by ${ADMIN_EMAIL}`);
  await row.click();
  await expect(page.getByTestId("decision-banner")).toContainText("Message: Not during the change freeze");
  await finalScreenshot(page, testInfo, "history");
});

test("edit: a field that says no number, and invalid JSON, are refused before sending; a valid edit reaches the agent and history shows proposed, approved and executed", async ({ page }, testInfo) => {
  const tool = unique("transfer_funds");
  await logIn(page, undefined, undefined, `/?tool=${tool}`);
  const agent = new AgentProcess({ AGENT_TOOL: tool, AGENT_ARGS: JSON.stringify({ amount: 5000, to: "acct-1" }) });
  try {
    await agent.next("approval-requested");
    await inboxRow(page, tool, "A2").click();
    await decisionArmed(page);
    await page.keyboard.press("e");
    // One field per argument, the first one ready to type in.
    const form = detail(page).getByRole("form", { name: "Edit the arguments" });
    const amountField = form.getByLabel(/^amount/);
    await expect(amountField).toBeFocused();
    await amountField.fill("50 EUR");
    await expect(detail(page).getByRole("alert").filter({ hasText: "amount must be a number" })).toBeVisible();
    const send = detail(page).getByRole("button", { name: "Approve with edits" });
    await expect(send).toBeDisabled();
    await amountField.press("Control+Enter");
    await amountField.fill("50");

    // Raw JSON stays available, and refuses what does not parse.
    await form.getByRole("button", { name: "Raw JSON" }).click();
    const editor = page.getByLabel("Edited arguments (JSON)");
    await expect(editor).toBeFocused();
    expect(JSON.parse(await editor.inputValue())).toEqual({ amount: 50, to: "acct-1" });
    await editor.fill('{"amount": 50, "to": ');
    await expect(detail(page).getByRole("alert").filter({ hasText: "invalid JSON" })).toBeVisible();
    await expect(send).toBeDisabled();
    await editor.press("Control+Enter");
    expect(agent.has("decided")).toBe(false);

    await editor.fill('{"amount": 50, "to": "acct-1", "memo": "capped by ops"}');
    await expect(detail(page).getByText("Valid JSON.")).toBeVisible();
    await send.click();
    await sendNow(page);
    const executed = await agent.next("executed", 5_000);
    expect(executed.executedArgs).toEqual({ amount: 50, to: "acct-1", memo: "capped by ops" });
    agent.finish();
    await agent.next("completed");

    await page.getByRole("tab", { name: "History" }).click();
    await page.getByLabel("Filter by tool").fill(tool);
    await expect(page.getByRole("list", { name: "Decided approvals" }).getByRole("listitem")).toHaveCount(1);
    await inboxRow(page, tool, "A2").click();
    await expect(page.getByTestId("decision-banner")).toContainText("Approved with edits by you");
    const table = page.getByRole("table", { name: "Proposed, approved and executed arguments" });
    const amount = table.getByRole("row", { name: /^amount/ });
    await expect(amount.getByRole("cell")).toHaveText(["5000", "50changed", "50changed"]);
    await expect(table.getByRole("row", { name: /^memo/ }).getByRole("cell")).toHaveText(["(absent)", '"capped by ops"changed', '"capped by ops"changed']);
    await finalScreenshot(page, testInfo, "edit-history");
  } finally {
    agent.stop();
  }
});

test("bulk approve a filtered selection, and decide with the keyboard (j, a, r)", async ({ page }, testInfo) => {
  const title = unique("Bulk");
  const sessionId = (await requestApproval({ tool: unique("bulk_a"), title })).sessionId;
  const more = [await requestApproval({ tool: unique("bulk_b"), sessionId }), await requestApproval({ tool: unique("bulk_c"), sessionId })];
  // The agent allows only a rejection of this one: a bulk approval must skip it and say so.
  const rejectOnly = await requestApproval({ tool: unique("bulk_reject_only"), sessionId, allow: ["reject"] });
  const keyboardTitle = unique("Keys");
  const k1 = await requestApproval({ tool: unique("key_one"), title: keyboardTitle });
  const k2 = await requestApproval({ tool: unique("key_two"), sessionId: k1.sessionId });
  await logIn(page);

  await page.getByLabel("Filter by session").selectOption({ label: title });
  const list = page.getByRole("list", { name: "Pending approvals" });
  await expect(list.getByRole("listitem")).toHaveCount(4);
  await page.getByLabel("Select all shown approvals").check();
  await page.getByRole("button", { name: "Approve 4" }).click();
  // Nothing is decided until the operator confirms what the selection holds.
  const confirm = page.getByRole("alertdialog", { name: "Confirm bulk decision" });
  await expect(confirm).toContainText("Approve 4 approvals: ");
  for (const item of more) expect((await awaitDecision(item.approvalId, 0)).status).toBe("PENDING");
  await confirm.getByRole("button", { name: "Yes, approve 4" }).click();
  await expect(page.getByTestId("inbox-status")).toHaveText("You approved 3 of 4. 1 skipped.");
  // Afterwards, what happened to each one.
  const results = page.getByRole("region", { name: "Bulk decision results" });
  await expect(results.locator("[data-outcome=done]")).toHaveCount(3);
  await expect(results.locator("[data-outcome=skipped]")).toHaveText(/bulk_reject_only_\w+ · billing-agent\s*skipped: the agent does not allow approve/);
  for (const item of more) expect((await awaitDecision(item.approvalId)).status).toBe("APPROVED");
  expect((await awaitDecision(rejectOnly.approvalId, 0)).status).toBe("PENDING");
  await expect(list.getByRole("listitem")).toHaveCount(1);
  await finalScreenshot(page, testInfo, "bulk-report");
  await results.getByRole("button", { name: "Dismiss" }).click();

  // Keyboard: most urgent first (no expiries, so the longest waiting), so j opens key_one, a approves it; j opens key_two, r rejects it.
  await page.getByLabel("Filter by session").selectOption({ label: keyboardTitle });
  await expect(list.getByRole("listitem")).toHaveCount(2);
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.keyboard.press("j");
  await expect(page.locator("[aria-current=true]")).toHaveAccessibleName(/^Open key_one/);
  await decisionArmed(page);
  await page.keyboard.press("a");
  await sendNow(page);
  await expect(page.getByTestId("inbox-status")).toHaveText(/^You approved key_one/);
  await page.keyboard.press("j");
  await expect(page.locator("[aria-current=true]")).toHaveAccessibleName(/^Open key_two/);
  await decisionArmed(page);
  await page.keyboard.press("r");
  await page.keyboard.type("Not this one");
  await page.keyboard.press("Control+Enter");
  await sendNow(page);
  await expect(page.getByTestId("inbox-status")).toHaveText(/^You rejected key_two/);
  expect((await awaitDecision(k1.approvalId)).status).toBe("APPROVED");
  expect(await awaitDecision(k2.approvalId)).toMatchObject({ status: "REJECTED", decision: { message: "Not this one" } });

  // Single-key shortcuts can be turned off (WCAG 2.1.4), and stay off after a reload.
  await page.getByLabel("Single-key shortcuts").uncheck();
  await expect(page.getByLabel("Keyboard shortcuts")).toHaveCount(0);
  await page.reload();
  await expect(page.getByLabel("Single-key shortcuts")).not.toBeChecked();
  await expect(page.getByLabel("Keyboard shortcuts")).toHaveCount(0);
  await page.getByLabel("Single-key shortcuts").check();
  await finalScreenshot(page, testInfo, "keyboard");
});

test("a viewer sees approvals but no decision controls, and a forged decide call is FORBIDDEN", async ({ page }, testInfo) => {
  const viewer = await createOperator("VIEWER");
  const tool = unique("rotate_keys");
  const pending = await requestApproval({ tool });
  await logIn(page, viewer.email, viewer.password, `/?tool=${tool}`);
  await expect(page.getByTestId("operator-identity")).toContainText("(viewer)");

  await inboxRow(page, tool).click();
  await expect(detail(page)).toContainText("You have the viewer role");
  await expect(detail(page).getByRole("button", { name: /Approve|Reject|Edit|Respond/ })).toHaveCount(0);
  await expect(page.getByLabel("Select all shown approvals")).toHaveCount(0);
  await page.keyboard.press("a");

  const forged = await page.request.post("/api/trpc/approval.decide", { data: { approvalId: pending.approvalId, action: "approve" }, headers: { origin: BASE_URL } });
  expect(forged.status()).toBe(403);
  expect(((await forged.json()) as { error: { data: { code: string } } }).error.data.code).toBe("FORBIDDEN");
  expect((await awaitDecision(pending.approvalId, 0)).status).toBe("PENDING");
  await finalScreenshot(page, testInfo, "viewer");
});
