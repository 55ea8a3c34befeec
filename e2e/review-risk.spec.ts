// Risk is shown, not left to the reader: a rule's label on the inbox row and
// above the arguments, the risky text of a long statement marked, a tool's
// destructive hint, and the agent's state at the ask one click away.
import { expect, test } from "@playwright/test";
import { adminApi, agentCall, inboxRow, keepScreenshot, logIn, unique } from "./helpers";

const STATEMENT = [
  "-- purge drafts (ticket OPS-4711)",
  ...Array.from({ length: 27 }, (_, line) => `-- step ${line + 1}: checked by the agent`),
  "DELETE FROM documents",
  "WHERE status IN ('draft', 'pending_review', 'disputed');",
].join("\n");

const NOTE = Array.from({ length: 20 }, (_, line) => `note line ${line + 1}`).join("\n");

test("a risky value is highlighted under the rule's label, the row carries the label, and the agent's state is one click away", async ({ page }, testInfo) => {
  const tool = unique("run_sql");
  const admin = await adminApi();
  await admin.call("policy.create", { name: unique("sql deletes"), match: { tool }, outcome: "require", riskLabel: "deletes documents", riskPaths: ["$.database"] });
  await admin.dispose();
  const { sessionId } = await agentCall<{ sessionId: string }>("session.open", { title: unique("purge drafts") });
  const { taskId, requestId } = await agentCall<{ taskId: string; requestId: string }>("request.begin", { sessionId, agent: "janitor" });
  await agentCall("thread.configure", { taskId, config: {} });
  await agentCall("state.save", { taskId, requestId, state: { ticket: "OPS-4711: purge drafts only" } });
  const { approvalId } = await agentCall<{ approvalId: string }>("approval.request", {
    requestId,
    tool,
    args: { database: "prod", query: STATEMENT, dryRun: false, notify: { to: "ops@example.com", body: NOTE } },
    annotations: { title: "Run SQL", readOnlyHint: false },
  });

  for (const [label, viewport] of [
    ["1440x900", { width: 1440, height: 900 }],
    ["1280x800", { width: 1280, height: 800 }],
    ["390x844", { width: 390, height: 844 }],
  ] as const) {
    await page.setViewportSize(viewport);
    if (label === "1440x900") {
      await logIn(page);
      // Earlier files leave approvals waiting; the tool filter finds this one's row among them.
      await page.getByLabel("Filter by tool").fill(tool);
      await expect(inboxRow(page, tool, "janitor").getByTestId("risk-chip")).toHaveText("deletes documents +3");
      await inboxRow(page, tool, "janitor").click();
    } else {
      await page.goto(`/approvals/${approvalId}`);
    }
    const flags = page.getByTestId("risk-flags").filter({ visible: true });
    await expect(flags).toContainText("deletes documents");
    const sql = flags.locator(`[data-kind="sql-delete"]`);
    await expect(sql).toContainText("$.query");
    await expect(sql.getByTestId("risk-match")).toHaveText("DELETE");
    await expect(sql.getByTestId("risk-value")).toHaveText("DELETE FROM documents");
    await expect(flags.getByTestId("risk-flag").filter({ hasText: "dryRun is false" })).toBeVisible();
    await expect(flags.getByTestId("risk-flag").filter({ hasText: "may be destructive" })).toContainText("Run SQL");
    await sql.getByTestId("risk-match").scrollIntoViewIfNeeded();
    await keepScreenshot(page, testInfo, `risk-${label}`);

    // In the arguments themselves: the rule's path and dryRun marked where they are, the
    // statement framed with its flags, its DELETE marked once unfolded.
    const args = page.getByRole("group", { name: "Proposed arguments as JSON" }).filter({ visible: true });
    await expect(args.locator('[data-testid="risk-value-inline"][data-path="$.database"]')).toContainText("deletes documents");
    await expect(args.locator('[data-testid="risk-value-inline"][data-path="$.dryRun"]')).toContainText("dryRun is false");
    const query = args.getByTestId("long-text-query");
    await expect(query).toHaveAttribute("data-risky", "true");
    await expect(query.getByRole("button", { name: /Show all 30 lines/ })).toContainText("flagged words in the folded part");
    await query.getByRole("button", { name: /Show all 30 lines/ }).click();
    await expect(query.getByTestId("risk-match-inline")).toHaveText("DELETE");
    await query.getByTestId("risk-match-inline").scrollIntoViewIfNeeded();
    await keepScreenshot(page, testInfo, `risk-in-arguments-${label}`);
    // A long text inside another value is folded too, its first lines shown.
    const nested = args.getByTestId("long-text-notify.body");
    await expect(nested).toContainText("note line 8");
    await expect(nested).not.toContainText("note line 9");
    await expect(nested.getByRole("button", { name: "Show all 20 lines (" })).toBeVisible();
  }

  const state = page.getByTestId("agent-state").filter({ visible: true });
  await expect(state).toContainText("Agent's state when it asked: v1, 1 key, its first ask in this task");
  await state.getByRole("button").click();
  await expect(state.getByRole("table", { name: "State keys at the ask" })).toContainText("OPS-4711: purge drafts only");
  await keepScreenshot(page, testInfo, "agent-state-390x844");
});

test("a call nothing flags says so, and not that it is safe", async ({ page }) => {
  const tool = unique("lookup");
  const { sessionId } = await agentCall<{ sessionId: string }>("session.open", { title: unique("quiet") });
  const { requestId } = await agentCall<{ requestId: string }>("request.begin", { sessionId, agent: "janitor" });
  const { approvalId } = await agentCall<{ approvalId: string }>("approval.request", { requestId, tool, args: { id: 7 } });
  await logIn(page, undefined, undefined, `/approvals/${approvalId}`);
  await expect(page.getByTestId("risk-none")).toContainText("Nothing flagged.");
  await expect(page.getByTestId("risk-none")).toContainText("they do not say a call is safe");
  await expect(page.getByTestId("risk-flags")).toHaveCount(0);
});
