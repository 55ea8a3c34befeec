// What agents built on frameworks show the operator: the framework beside the
// agent, the agent's summary first, a question answered in free text, and the
// calls one turn paused shown together, each decided on its own; at desktop
// and phone widths.
import { expect, test } from "@playwright/test";
import { agentCall, agentWaits, awaitDecision, decisionArmed, finalScreenshot, logIn, sendNow, unique } from "./helpers";

async function pausedTurn(agent: string) {
  const { sessionId } = await agentCall<{ sessionId: string }>("session.open", { title: unique("framework turn") });
  const begun = await agentCall<{ taskId: string; requestId: string }>("request.begin", { sessionId, agent, framework: "langgraph" });
  const batch = unique("turn");
  const ask = (tool: string, args: unknown, summary?: string) =>
    agentCall<{ approvalId: string }>("approval.request", { requestId: begun.requestId, tool, args, batch, externalId: unique("interrupt"), ...(summary ? { summary } : {}) });
  const email = await ask("send_email", { to: "ada@example.com", subject: "Your refund" }, "Tell **Ada** her refund of *100 EUR* went through.");
  const sms = await ask("send_sms", { to: "+31 6 1234 5678", text: "Refund sent" });
  const ticket = await ask("close_ticket", { id: 4711 });
  // The agent waits for all three (long-polls), as a framework adapter does.
  agentWaits([email.approvalId, sms.approvalId, ticket.approvalId]);
  return { sessionId, ...begun, email, sms, ticket };
}

for (const [label, viewport] of [
  ["desktop", { width: 1280, height: 800 }],
  ["phone", { width: 390, height: 844 }],
] as const) {
  test(`${label}: calls paused together are shown as one group with the agent's summary and framework, and each is decided on its own`, async ({ page }, testInfo) => {
    await page.setViewportSize(viewport);
    const agent = unique("graph");
    const turn = await pausedTurn(agent);
    await logIn(page, undefined, undefined, `/?approval=${turn.email.approvalId}`);

    const detail = page.getByRole("article", { name: `Approval send_email by ${agent}` });
    await expect(detail.getByTestId("framework")).toHaveText("LangGraph");
    await expect(detail.getByTestId("summary").locator("strong")).toHaveText("Ada");
    const group = detail.getByTestId("paused-together");
    await expect(group.getByRole("heading")).toHaveText("Paused together: 3 calls");
    await expect(group.getByRole("listitem")).toHaveCount(3);
    await expect(group).toContainText("3 still wait");

    await detail.getByRole("button", { name: /^Approve a$/ }).click();
    await sendNow(page);
    expect((await awaitDecision(turn.email.approvalId)).status).toBe("APPROVED");
    expect((await awaitDecision(turn.sms.approvalId, 0)).status).toBe("PENDING");
    // The inbox moves on to the next call; the group says what is decided and what still waits.
    const group2 = page.getByTestId("paused-together");
    await expect(group2).toContainText("2 still wait");
    await expect(group2.getByRole("listitem").filter({ hasText: "send_email" })).toContainText("APPROVED");

    // A decided call of the group, from the group's list.
    await group2.getByRole("link", { name: "send_email" }).click();
    await expect(page.getByRole("article", { name: `Approval send_email by ${agent}` }).getByTestId("paused-together")).toContainText("2 still wait");
    await expect(page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).resolves.toBe(true);
    await finalScreenshot(page, testInfo, `paused-together-${label}`);
  });
}

test("a question is answered in free text: the answer box is open, and the agent gets the answer", async ({ page }, testInfo) => {
  const agent = unique("support-agent");
  const { sessionId } = await agentCall<{ sessionId: string }>("session.open", { title: unique("question") });
  const begun = await agentCall<{ requestId: string }>("request.begin", { sessionId, agent, framework: "a2a" });
  const asked = await agentCall<{ approvalId: string }>("approval.request", {
    requestId: begun.requestId,
    tool: "input_required",
    args: {},
    kind: "question",
    summary: "The customer wants a refund but gave no order number. **Which order** should I refund?",
  });
  await logIn(page, undefined, undefined, `/?session=${sessionId}&approval=${asked.approvalId}`);
  const detail = page.getByRole("article", { name: `Approval input_required by ${agent}` });
  await expect(detail.getByTestId("question-kind")).toHaveText("question");
  await expect(detail.getByTestId("framework")).toHaveText("A2A");
  await expect(detail.getByRole("button", { name: /^Approve a$/ })).toHaveCount(0);
  await expect(detail.getByRole("heading", { name: "Proposed arguments" })).toHaveCount(0);
  const answer = detail.getByLabel("Your answer to the agent");
  await expect(answer).toBeVisible();
  await answer.fill("Order 1001, placed on 3 November");
  await finalScreenshot(page, testInfo, "question");
  await decisionArmed(page);
  await answer.press("Control+Enter");
  await sendNow(page);
  await expect.poll(async () => (await awaitDecision(asked.approvalId, 0)).decision?.message).toBe("Order 1001, placed on 3 November");
});

test("a form is filled in field by field: a wrong value is refused with what was wrong, a fitting answer reaches the agent", async ({ page }, testInfo) => {
  const agent = unique("calendar-agent");
  const { sessionId } = await agentCall<{ sessionId: string }>("session.open", { title: unique("form") });
  const begun = await agentCall<{ requestId: string }>("request.begin", { sessionId, agent, framework: "mcp" });
  const asked = await agentCall<{ approvalId: string }>("approval.request", {
    requestId: begun.requestId,
    tool: "elicitation",
    args: {},
    kind: "form",
    summary: "Who should the meeting be with, and for how long?",
    form: {
      type: "object",
      properties: {
        attendee: { type: "string", format: "email", title: "Attendee's email" },
        minutes: { type: "integer", minimum: 15, maximum: 120, title: "Length in minutes" },
        room: { type: "string", enum: ["Ada", "Turing"], title: "Room" },
        video: { type: "boolean", title: "Video link", default: true },
      },
      required: ["attendee", "minutes"],
    },
  });
  agentWaits([asked.approvalId]);
  await logIn(page, undefined, undefined, `/?session=${sessionId}&approval=${asked.approvalId}`);
  const detail = page.getByRole("article", { name: `Approval elicitation by ${agent}` });
  await expect(detail.getByTestId("form-kind")).toHaveText("form");
  await expect(detail.getByTestId("framework")).toHaveText("MCP");
  const form = detail.getByRole("form", { name: "Answer the form" });
  await expect(form.getByLabel("Video link")).toBeChecked();
  await form.getByLabel("Attendee's email").fill("ada@example.com");
  await form.getByLabel(/Length in minutes/).fill("200");
  await form.getByLabel("Room").selectOption("Turing");
  await finalScreenshot(page, testInfo, "form");
  // The browser lets the number through its own check only when asked to; the server refuses it either way.
  await form.evaluate((element: HTMLFormElement) => (element.noValidate = true));
  await form.getByRole("button", { name: "Send answer" }).click();
  await sendNow(page);
  // Refused: the approval opens again with the answer as it was sent, to be corrected.
  await expect(detail.getByRole("alert").filter({ hasText: "minutes must be <= 120" })).toBeVisible();
  await expect(form.getByLabel("Attendee's email")).toHaveValue("ada@example.com");
  await finalScreenshot(page, testInfo, "refused-form-open-again");
  await form.getByLabel(/Length in minutes/).fill("45");
  await form.getByRole("button", { name: "Send answer" }).click();
  await sendNow(page);
  await expect.poll(async () => (await awaitDecision(asked.approvalId, 0)).decision?.args).toEqual({ attendee: "ada@example.com", minutes: 45, room: "Turing", video: true });
});
