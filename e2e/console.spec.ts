// The rest of the console: not-found pages for unknown ids, an expired session
// sent to log in and brought back to the same URL, the audit log with its
// hash-chain verdict, and state diffs between versions, on a phone too.
import { expect, test } from "@playwright/test";
import { ADMIN_EMAIL, ADMIN_PASSWORD, BASE_URL } from "./fixtures";
import { agentCall, finalScreenshot, inboxRow, logIn, loginFormReady, requestApproval, sendNow, unique } from "./helpers";

test("unknown ids in the URL show the not-found page", async ({ page }, testInfo) => {
  await logIn(page);
  for (const path of ["/sessions/ses_doesnotexist0", "/approvals/apr_doesnotexist0", "/sessions/not-an-id", "/no/such/page"]) {
    await page.goto(path);
    await expect(page.getByRole("heading", { name: "Not found" })).toBeVisible();
  }
  await finalScreenshot(page, testInfo, "not-found");
});

test("an expired session goes to the login page keeping the URL, and logging in returns there", async ({ page, context }, testInfo) => {
  const tool = unique("scale_cluster");
  const pending = await requestApproval({ tool });
  await logIn(page, undefined, undefined, `/?approval=${pending.approvalId}`);
  await expect(page.getByRole("region", { name: "Approval detail" }).getByRole("heading", { name: tool })).toBeVisible();

  // Revoke the session on the server but keep the (now dead) cookie, as an expiry does.
  const cookies = await context.cookies();
  expect((await page.request.post("/api/trpc/auth.logout", { data: {}, headers: { origin: BASE_URL } })).status()).toBe(200);
  await context.addCookies(cookies);

  // The server closes the session's live connection; the console checks the
  // session, is refused, and sends the operator to log in.
  await expect(page).toHaveURL(`${BASE_URL}/login?next=${encodeURIComponent(`/?approval=${pending.approvalId}`)}`);
  await loginFormReady(page);
  await page.getByLabel("Email").fill(ADMIN_EMAIL);
  await page.getByLabel("Password").fill(ADMIN_PASSWORD);
  await page.getByRole("button", { name: "Log in" }).click();
  await expect(page).toHaveURL(`${BASE_URL}/?approval=${pending.approvalId}`);
  await expect(page.getByRole("region", { name: "Approval detail" }).getByRole("heading", { name: tool })).toBeVisible();
  await finalScreenshot(page, testInfo, "back-after-login");
});

test("the audit log lists decisions with who made them, filterable, and shows the hash chain intact", async ({ page }, testInfo) => {
  const tool = unique("audited_tool");
  const pending = await requestApproval({ tool });
  await logIn(page, undefined, undefined, `/?tool=${tool}`);
  await inboxRow(page, tool).click();
  await page.getByRole("region", { name: "Approval detail" }).getByRole("button", { name: /^Approve a$/ }).click();
  await sendNow(page);
  await expect(page.getByTestId("inbox-status")).toHaveText(`You approved ${tool} for billing-agent.`);

  await page.getByRole("link", { name: "Audit log" }).click();
  await expect(page.getByRole("status", { name: "Hash chain" })).toContainText(/Hash chain intact: all \d+ entries verified/);
  await page.getByLabel("Filter by action").selectOption({ label: "Approval decided" });
  await page.getByLabel("Filter by subject id").fill(pending.approvalId);
  const rows = page.getByRole("table", { name: "Audit entries" }).getByRole("row");
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(1)).toContainText("approval.decided");
  await expect(rows.nth(1)).toContainText(ADMIN_EMAIL);
  await expect(rows.nth(1)).toContainText(tool);
  await expect(page).toHaveURL(new RegExp(`subject=${pending.approvalId}`));
  await finalScreenshot(page, testInfo, "audit");
});

test("a state diff between two versions shows the changed keys with their owners", async ({ page }, testInfo) => {
  const { sessionId } = await agentCall<{ sessionId: string }>("session.open", { title: unique("State") });
  const begun = await agentCall<{ taskId: string; requestId: string }>("request.begin", { sessionId, agent: "planner" });
  const { taskId, requestId } = begun;
  await agentCall("thread.configure", { taskId, config: {}, ownership: { rules: [{ match: { prefix: "mem." }, owner: "MEMORY" }] } });
  await agentCall("state.save", { taskId, requestId, state: { city: "Paris", nights: 2, budget: 900 } });
  await agentCall("state.remember", { taskId, requestId, memory: { "mem.traveller": "Ana" } });
  await agentCall("state.save", { taskId, requestId, state: { city: "Lyon", nights: 2, hotel: "Le Royal", "mem.traveller": "Ana" } });

  await logIn(page, undefined, undefined, `/sessions/${sessionId}?task=${begun.taskId}`);
  await page.getByRole("tab", { name: "State" }).click();
  await expect(page.getByRole("table", { name: "State versions" }).getByRole("row")).toHaveCount(4);
  // By default the last two versions: v2 (after remember) -> v3.
  await expect(page.getByTestId("diff-summary")).toHaveText("v2 → v3: 1 added, 1 removed, 1 changed");
  const keys = page.getByRole("table", { name: "Changed keys" });
  await expect(keys.getByRole("row", { name: /^city/ }).getByRole("cell")).toHaveText(["~ changed", "SHARED(last-write-wins)"]);
  // The JSON diff of those keys: unchanged lines folded away, the changed word marked.
  const diff = page.getByTestId("state-diff");
  await expect(diff).toContainText('"city": "Paris"');
  await expect(diff).toContainText('"city": "Lyon"');
  await expect(diff).not.toContainText('"nights"');
  await expect(diff.locator("del, ins, [class*=word-removed], [class*=word-added]").filter({ hasText: "Lyon" })).not.toHaveCount(0);
  // Readable at 1280×800: nothing cut off at the right, no value wrapped letter by letter.
  const overflow = await diff.evaluate((element) => element.scrollWidth - element.clientWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  const hotelLine = diff.getByText('"hotel": "Le Royal"');
  expect((await hotelLine.boundingBox())!.height).toBeLessThan(24);
  await page.getByRole("button", { name: "Side by side" }).click();
  await expect(diff).toContainText('"city": "Paris"');
  expect(await diff.evaluate((element) => element.scrollWidth - element.clientWidth)).toBeLessThanOrEqual(0);
  await diff.scrollIntoViewIfNeeded();
  await finalScreenshot(page, testInfo, "state-diff-side-by-side");
  await page.getByRole("button", { name: "Unified" }).click();
  await expect(keys.getByRole("row", { name: /^hotel/ })).toContainText("+ added");
  await expect(keys.getByRole("row", { name: /^budget/ })).toContainText("− removed");
  await expect(keys.getByRole("row", { name: /^nights/ })).toHaveCount(0);
  await expect(keys.getByRole("row", { name: /^mem\.traveller/ })).toHaveCount(0);

  // Any two versions: from the first, the remembered key appears too, with its MEMORY owner.
  await page.getByLabel("From version").selectOption("1");
  await expect(page.getByTestId("diff-summary")).toHaveText("v1 → v3: 2 added, 1 removed, 1 changed");
  await expect(keys.getByRole("row", { name: /^mem\.traveller/ })).toContainText("MEMORY");
  await page.getByTestId("state-diff").scrollIntoViewIfNeeded();
  await finalScreenshot(page, testInfo, "state-diff");
});

test("on a phone, a session shows its tree above the selected task, and the task's state diff fits the screen", async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 390, height: 844 });
  const { sessionId } = await agentCall<{ sessionId: string }>("session.open", { title: unique("Phone") });
  const { taskId, requestId } = await agentCall<{ taskId: string; requestId: string }>("request.begin", { sessionId, agent: "planner" });
  await agentCall("thread.configure", { taskId, config: {} });
  await agentCall("state.save", { taskId, requestId, state: { city: "Paris", budget: 900 } });
  await agentCall("state.save", { taskId, requestId, state: { city: "Lyon", hotel: "Le Royal" } });
  await logIn(page, undefined, undefined, `/sessions/${sessionId}?task=${taskId}`);
  await expect(page.getByRole("region", { name: "Tasks" }).getByText("planner")).toBeVisible();
  await page.getByRole("tab", { name: "State" }).click();
  const diff = page.getByTestId("state-diff");
  await expect(diff).toContainText('"city": "Lyon"');
  await diff.scrollIntoViewIfNeeded();
  const box = (await diff.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(390);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await finalScreenshot(page, testInfo, "session-state-phone");
});
