// Gates owned by operators, in the browser: approving and remembering turns a
// decision into a rule that decides the next call, and an approval that needs
// two approvers shows its progress until the second one agrees.
import { expect, test, type Page } from "@playwright/test";
import { ADMIN_EMAIL } from "./fixtures";
import { adminApi, agentCall, awaitDecision, createOperator, finalScreenshot, inboxRow, logIn, requestApproval, sendNow, unique } from "./helpers";

const detail = (page: Page) => page.getByRole("region", { name: "Approval detail" });

test("approve and remember for this session: the next same call in the session is approved by the rule, and the screen says so", async ({ page }, testInfo) => {
  const tool = unique("send_note");
  const first = await requestApproval({ tool, args: { to: "ada@example.com", text: "Your refund is on its way" } });
  const admin = await adminApi();
  try {
    await logIn(page, undefined, undefined, `/?tool=${tool}`);
    await inboxRow(page, tool).click();
    await expect(detail(page).getByTestId("gate")).toContainText("an approver, set by the workspace default");
    await detail(page).getByRole("button", { name: "Approve and remember…" }).click();
    await detail(page).getByLabel("in this session").check();
    // What the rule covers is said before it is written: new calls only.
    await expect(detail(page).getByTestId("remember-covers")).toContainText("approvals already waiting, for this tool too, stay in the inbox");
    await detail(page).getByRole("button", { name: "Approve and remember", exact: true }).click();
    await sendNow(page);
    await expect(page.getByTestId("inbox-status")).toHaveText(`You approved ${tool} for billing-agent.`);

    // The same tool for the same agent in the same session: decided by the remembered rule.
    const again = await agentCall<{ requestId: string }>("request.begin", { sessionId: first.sessionId, agent: "billing-agent" });
    const decided = await agentCall<{ approvalId: string; status: string; decision: { decidedBy: string; receipt?: string } }>("approval.request", {
      requestId: again.requestId,
      tool,
      args: { to: "grace@example.com", text: "Done" },
    });
    expect(decided.status).toBe("APPROVED");
    expect(decided.decision.decidedBy).toMatch(/^policy:Allow send_note_\w+ for billing-agent in this session/);
    expect(decided.decision.receipt).toBeTruthy();
    // Another session still asks a person.
    const elsewhere = await requestApproval({ tool });
    expect((await awaitDecision(elsewhere.approvalId, 0)).status).toBe("PENDING");

    await page.goto(`/approvals/${decided.approvalId}`);
    await expect(page.getByTestId("decision-banner")).toContainText("Approved automatically by the rule");
    await finalScreenshot(page, testInfo, "decided-by-rule");
    const remembered = (await admin.rules()).find((rule) => rule.sourceApprovalId === first.approvalId);
    expect(remembered).toBeTruthy();
    await admin.call("policy.delete", { policyId: remembered!.policyId });
  } finally {
    await admin.dispose();
  }
});

test("two approvers: the first approval shows 1 of 2, the second one decides, and the agent resumes", async ({ page, browser }, testInfo) => {
  const tool = unique("delete_user");
  const admin = await adminApi();
  const rule = await admin.call<{ policyId: string }>("policy.create", { name: unique("two approvers"), match: { tool }, outcome: "require", approvers: 2 });
  const second = await createOperator("OPERATOR");
  const contextB = await browser.newContext();
  const pageB = await contextB.newPage();
  try {
    const asked = await requestApproval({ tool, args: { userId: 42 } });
    await logIn(page, undefined, undefined, `/?tool=${tool}`);
    await inboxRow(page, tool).click();
    await expect(detail(page).getByTestId("gate")).toContainText("2 distinct approvers");
    await expect(detail(page).getByTestId("quorum-progress")).toContainText("0 of 2 approved");
    await detail(page).getByRole("button", { name: /^Approve a$/ }).click();
    await sendNow(page);
    await expect(page.getByTestId("decision-toast").filter({ hasText: "1 of 2" })).toBeVisible();
    await inboxRow(page, tool).click();
    await expect(detail(page).getByTestId("quorum-progress")).toContainText(`1 of 2 approved: ${ADMIN_EMAIL}`);
    // One's own vote shows on the button, which takes no second press; an answer in words is not offered to a quorum.
    await expect(detail(page).getByRole("button", { name: "✓ Approved by you (1 of 2)" })).toBeDisabled();
    await expect(detail(page).getByRole("button", { name: /^Approve a$/ })).toHaveCount(0);
    await expect(detail(page).getByRole("button", { name: "Respond instead…" })).toHaveCount(0);
    expect((await awaitDecision(asked.approvalId, 0)).status).toBe("PENDING");
    await finalScreenshot(page, testInfo, "one-of-two");

    await logIn(pageB, second.email, second.password, `/?tool=${tool}`);
    await inboxRow(pageB, tool).click();
    await detail(pageB).getByRole("button", { name: /^Approve a$/ }).click();
    await sendNow(pageB);
    await expect(pageB.getByTestId("decision-toast")).toHaveAttribute("data-state", "sent");
    await pageB.goto(`/approvals/${asked.approvalId}`);
    await expect(pageB.getByTestId("decision-banner")).toContainText(`Approved by ${ADMIN_EMAIL}, ${second.email}`);
    const result = await awaitDecision(asked.approvalId, 0);
    expect(result).toMatchObject({ status: "APPROVED", decision: { action: "approve", decidedBy: `${ADMIN_EMAIL}, ${second.email}` } });
    await finalScreenshot(pageB, testInfo, "two-of-two");
  } finally {
    await admin.call("policy.delete", { policyId: rule.policyId });
    await admin.dispose();
    await contextB.close();
  }
});
