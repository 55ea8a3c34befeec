// No decision on something the operator did not see: after a decision the next
// approval opens under the pointer, and a second click, tap or key meant for the
// last one lands before its controls are armed; live updates never move what is
// under the pointer; a decision waits a few seconds in the browser, where Undo
// takes it back, and it is sent (or the operator warned) whatever happens to the
// page or the connection meanwhile.
import { expect, test, type Page } from "@playwright/test";
import { ADMIN_EMAIL } from "./fixtures";
import { adminApi, awaitDecision, createOperator, decisionArmed, finalScreenshot, logIn, requestApproval, sendNow, unique } from "./helpers";

const detail = (page: Page) => page.getByRole("region", { name: "Approval detail" });
const approveButton = (page: Page) => detail(page).getByRole("button", { name: /^Approve a$/ });
const toasts = (page: Page) => page.getByTestId("decision-toast");

/** Two approvals in a session of their own, the first opened in the inbox and armed. */
async function openFirstOfTwo(page: Page, prefix: string) {
  const tools = [unique(`${prefix}_one`), unique(`${prefix}_two`)] as const;
  const first = await requestApproval({ tool: tools[0], title: unique("Arming") });
  const second = await requestApproval({ tool: tools[1], sessionId: first.sessionId });
  await logIn(page, undefined, undefined, `/?session=${first.sessionId}&approval=${first.approvalId}`);
  await expect(detail(page).getByRole("heading", { name: tools[0] })).toBeVisible();
  await decisionArmed(page);
  return { tools, first, second };
}

/** The centre of the open approval's Approve button. */
async function approveCentre(page: Page) {
  const box = (await approveButton(page).boundingBox())!;
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

/** Exactly the first was decided: the one waiting is named, sent, and the second still waits. */
async function onlyFirstApproved(page: Page, { tools, first, second }: Awaited<ReturnType<typeof openFirstOfTwo>>, at: { x: number; y: number }) {
  // The second opened where the first was, its Approve under the same point.
  await expect(detail(page).getByRole("heading", { name: tools[1] })).toBeVisible();
  const box = (await approveButton(page).boundingBox())!;
  expect(at.x >= box.x && at.x <= box.x + box.width && at.y >= box.y && at.y <= box.y + box.height).toBe(true);
  await expect(toasts(page)).toHaveCount(1);
  await expect(toasts(page)).toContainText(`Approving ${tools[0]} for billing-agent`);
  await sendNow(page);
  await expect(toasts(page)).toHaveAttribute("data-state", "sent");
  await expect(toasts(page)).toContainText(`Approved ${tools[0]} for billing-agent.`);
  expect((await awaitDecision(first.approvalId, 0)).status).toBe("APPROVED");
  expect((await awaitDecision(second.approvalId, 0)).status).toBe("PENDING");
}

/**
 * Presses sent through the DevTools protocol with the times they happen at: the
 * second comes 250 ms after the first by the events' own clock however long the
 * page takes to handle the first, as a quick double press does on a busy machine.
 */
async function presses(page: Page) {
  const cdp = await page.context().newCDPSession(page);
  const t0 = Date.now() / 1000;
  return {
    click: async ({ x, y }: { x: number; y: number }, afterMs: number, clickCount: number) => {
      const timestamp = t0 + afterMs / 1000;
      await cdp.send("Input.dispatchMouseEvent", { type: "mousePressed", x, y, button: "left", buttons: 1, clickCount, timestamp });
      await cdp.send("Input.dispatchMouseEvent", { type: "mouseReleased", x, y, button: "left", buttons: 0, clickCount, timestamp: timestamp + 0.05 });
    },
    tap: async ({ x, y }: { x: number; y: number }, afterMs: number) => {
      const timestamp = t0 + afterMs / 1000;
      await cdp.send("Input.dispatchTouchEvent", { type: "touchStart", touchPoints: [{ x, y }], timestamp });
      await cdp.send("Input.dispatchTouchEvent", { type: "touchEnd", touchPoints: [], timestamp: timestamp + 0.05 });
    },
    key: async (key: string, afterMs: number, autoRepeat = false) => {
      const timestamp = t0 + afterMs / 1000;
      const code = `Key${key.toUpperCase()}`;
      const keyCode = key.toUpperCase().charCodeAt(0);
      await cdp.send("Input.dispatchKeyEvent", { type: "keyDown", key, code, text: key, windowsVirtualKeyCode: keyCode, autoRepeat, timestamp });
      await cdp.send("Input.dispatchKeyEvent", { type: "keyUp", key, code, windowsVirtualKeyCode: keyCode, timestamp: timestamp + 0.05 });
    },
  };
}

for (const [label, viewport] of [
  ["1440", { width: 1440, height: 900 }],
  ["phone", { width: 390, height: 844 }],
] as const) {
  test(`${label}: two clicks 250 ms apart after an auto-advance approve exactly one approval`, async ({ page }, testInfo) => {
    await page.setViewportSize(viewport);
    const opened = await openFirstOfTwo(page, "double_click");
    const at = await approveCentre(page);
    const press = await presses(page);
    await press.click(at, 0, 1);
    await expect(detail(page).getByRole("heading", { name: opened.tools[1] })).toBeVisible();
    // The second click of a quick double click, meant for the first approval.
    await press.click(at, 250, 2);
    await finalScreenshot(page, testInfo, `second-click-${label}`);
    await onlyFirstApproved(page, opened, at);
  });
}

test("1440: the approve key pressed twice 250 ms apart approves exactly one approval", async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const opened = await openFirstOfTwo(page, "double_key");
  const at = await approveCentre(page);
  const press = await presses(page);
  await press.key("a", 0);
  await expect(detail(page).getByRole("heading", { name: opened.tools[1] })).toBeVisible();
  await press.key("a", 250);
  await onlyFirstApproved(page, opened, at);
});

test("a held approve key's repeats never decide", async ({ page }) => {
  const opened = await openFirstOfTwo(page, "held_key");
  const press = await presses(page);
  // Only repeats reach the page (the first press went to another window).
  await press.key("a", 0, true);
  await press.key("a", 30, true);
  await expect(approveButton(page)).toBeVisible();
  await expect(toasts(page)).toHaveCount(0);
  // The key pressed afresh decides.
  await press.key("a", 100);
  await expect(toasts(page)).toContainText(`Approving ${opened.tools[0]} for billing-agent`);
  await toasts(page).getByRole("button", { name: "Undo" }).click();
  expect((await awaitDecision(opened.first.approvalId, 0)).status).toBe("PENDING");
});

test.describe("on a touch screen", () => {
  test.use({ hasTouch: true, viewport: { width: 390, height: 844 } });

  test("phone: two taps 250 ms apart after an auto-advance approve exactly one approval", async ({ page }) => {
    const opened = await openFirstOfTwo(page, "double_tap");
    const at = await approveCentre(page);
    const press = await presses(page);
    await press.tap(at, 0);
    await expect(detail(page).getByRole("heading", { name: opened.tools[1] })).toBeVisible();
    await press.tap(at, 250);
    await onlyFirstApproved(page, opened, at);
  });
});

test("a live update while the pointer is on Approve does not change what it approves", async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const target = unique("pinned_target");
  const neighbour = unique("pinned_neighbour");
  const asked = await requestApproval({ tool: target, title: unique("Pinned") });
  const other = await requestApproval({ tool: neighbour, sessionId: asked.sessionId });
  // Newest first: the neighbour above the target, and every new arrival would go on top.
  await logIn(page, undefined, undefined, `/?session=${asked.sessionId}&sort=newest&approval=${asked.approvalId}`);
  await expect(detail(page).getByRole("heading", { name: target })).toBeVisible();
  await decisionArmed(page);
  const row = page.getByRole("list", { name: "Pending approvals" }).getByRole("listitem");
  await expect(row).toHaveCount(2);
  const before = { approve: await approveButton(page).boundingBox(), targetRow: await page.locator(`[data-approval-id="${asked.approvalId}"]`).boundingBox() };
  const at = await approveCentre(page);
  await page.mouse.move(at.x, at.y);

  // Meanwhile: two new approvals arrive in the session, and another operator decides the neighbour.
  const arrivals = [await requestApproval({ tool: unique("pinned_new"), sessionId: asked.sessionId }), await requestApproval({ tool: unique("pinned_new"), sessionId: asked.sessionId })];
  const admin = await adminApi();
  try {
    await admin.call("approval.decide", { approvalId: other.approvalId, action: "reject" });
  } finally {
    await admin.dispose();
  }
  // The arrivals are announced, not put in; the neighbour stays in its place, marked.
  await expect(page.getByTestId("new-arrivals")).toContainText("2 new");
  await expect(page.locator(`[data-approval-id="${other.approvalId}"]`).getByTestId("row-state")).toHaveText("no longer waiting");
  await expect(row).toHaveCount(2);
  expect(await approveButton(page).boundingBox()).toEqual(before.approve);
  expect(await page.locator(`[data-approval-id="${asked.approvalId}"]`).boundingBox()).toEqual(before.targetRow);
  await expect(detail(page).getByRole("heading", { name: target })).toBeVisible();
  await finalScreenshot(page, testInfo, "pinned");

  await page.mouse.down();
  await page.mouse.up();
  await expect(toasts(page)).toContainText(`Approving ${target} for billing-agent`);
  await sendNow(page);
  await expect(toasts(page)).toHaveAttribute("data-state", "sent");
  await expect(toasts(page)).toContainText(`Approved ${target} for billing-agent.`);
  expect((await awaitDecision(asked.approvalId, 0)).status).toBe("APPROVED");
  for (const arrival of arrivals) expect((await awaitDecision(arrival.approvalId, 0)).status).toBe("PENDING");
  // Asked to, the list takes its new order: the arrivals in, the decided ones out.
  await page.getByTestId("new-arrivals").getByRole("button", { name: "Show them" }).click();
  await expect(page.getByTestId("new-arrivals")).toHaveCount(0);
  await expect(row).toHaveCount(2);
  await expect(page.locator(`[data-approval-id="${arrivals[0]!.approvalId}"]`)).toBeVisible();
});

test("Undo within its window leaves the approval pending and nothing delivered", async ({ page }, testInfo) => {
  // The page's clock, so the test can pass the end of the window without waiting for it.
  await page.clock.install();
  const tool = unique("undo_me");
  const pending = await requestApproval({ tool });
  const sent: string[] = [];
  page.on("request", (request) => {
    if (request.url().includes("approval.decide")) sent.push(request.url());
  });
  await logIn(page, undefined, undefined, `/?tool=${tool}&approval=${pending.approvalId}`);
  await approveButton(page).click();
  await expect(toasts(page)).toContainText(`Approving ${tool} for billing-agent: sent in`);
  await expect(detail(page).getByTestId("queued-decision")).toBeVisible();
  await finalScreenshot(page, testInfo, "undo-window");
  await toasts(page).getByRole("button", { name: "Undo" }).click();
  await expect(toasts(page)).toContainText(`Undone: ${tool} for billing-agent was not approved; it still waits.`);
  await page.clock.fastForward(60_000);
  // The approval is back with its controls, and nothing was sent.
  await expect(approveButton(page)).toBeVisible();
  expect(sent).toEqual([]);
  expect((await awaitDecision(pending.approvalId, 0)).status).toBe("PENDING");
});

test("closing the tab within the undo window sends the decision rather than dropping it", async ({ page }) => {
  const tool = unique("close_tab");
  const pending = await requestApproval({ tool });
  await logIn(page, undefined, undefined, `/?tool=${tool}&approval=${pending.approvalId}`);
  await approveButton(page).click();
  await expect(toasts(page)).toContainText(`Approving ${tool}`);
  expect((await awaitDecision(pending.approvalId, 0)).status).toBe("PENDING");
  await page.close({ runBeforeUnload: true });
  expect((await awaitDecision(pending.approvalId)).status).toBe("APPROVED");
});

test("a decision the network refuses waits, says so, and is sent when the connection is back", async ({ page, context }, testInfo) => {
  const tool = unique("offline");
  const pending = await requestApproval({ tool });
  await logIn(page, undefined, undefined, `/?tool=${tool}&approval=${pending.approvalId}`);
  await approveButton(page).click();
  await context.setOffline(true);
  await sendNow(page);
  await expect(toasts(page)).toHaveAttribute("data-state", "unsent");
  await expect(toasts(page)).toContainText("not sent yet, the server cannot be reached");
  await finalScreenshot(page, testInfo, "unsent");
  expect((await awaitDecision(pending.approvalId, 0)).status).toBe("PENDING");
  await context.setOffline(false);
  await expect(toasts(page)).toHaveAttribute("data-state", "sent");
  await expect(toasts(page)).toContainText(`Approved ${tool} for billing-agent.`);
  expect((await awaitDecision(pending.approvalId, 0)).status).toBe("APPROVED");
});

test("another operator deciding within the window is shown, and nothing of ours is recorded", async ({ page }, testInfo) => {
  const operator = await createOperator("OPERATOR");
  const tool = unique("meanwhile");
  const pending = await requestApproval({ tool });
  await logIn(page, operator.email, operator.password, `/?tool=${tool}&approval=${pending.approvalId}`);
  await approveButton(page).click();
  await expect(toasts(page)).toContainText(`Approving ${tool}`);
  const admin = await adminApi();
  try {
    await admin.call("approval.decide", { approvalId: pending.approvalId, action: "reject", message: "not today" });
  } finally {
    await admin.dispose();
  }
  await expect(toasts(page)).toHaveAttribute("data-state", "late");
  await expect(toasts(page)).toContainText(new RegExp(`^Already rejected by ${ADMIN_EMAIL.replace(".", "\\.")} at .+: your decision on ${tool} for billing-agent was not recorded\\.`));
  await expect(detail(page).getByTestId("decision-banner")).toContainText(`Rejected by ${ADMIN_EMAIL}`);
  await finalScreenshot(page, testInfo, "meanwhile");
  expect(await awaitDecision(pending.approvalId, 0)).toMatchObject({ status: "REJECTED", decision: { decidedBy: ADMIN_EMAIL } });
});
