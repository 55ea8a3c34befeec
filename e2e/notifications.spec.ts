// The Notifications page in the browser: an admin adds a signed webhook channel
// (its secret shown once), puts an operator in a group, and an approval that
// waits for a person is posted to the channel; the approval says who was asked
// and where it was announced. The page fits a phone, and flags a channel that
// keeps failing.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import { adminApi, agentCall, finalScreenshot, keepScreenshot, logIn, requestApproval, unique } from "./helpers";

let receiver: Server;
let receiverUrl: string;
const posts: string[] = [];

test.beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      posts.push(body);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

test.afterAll(async () => {
  // Other tests' approvals are not announced to a receiver that is gone.
  const admin = await adminApi();
  try {
    const { channels } = await admin.query<{ channels: { channelId: string; name: string }[] }>("notification.channels");
    for (const channel of channels) await admin.call("notification.deleteChannel", { channelId: channel.channelId });
  } finally {
    await admin.dispose();
  }
  await new Promise((resolve) => receiver.close(resolve));
});

test("an admin adds a signed webhook channel; a waiting approval is posted to it, and its page says who was asked and where it went", async ({ page }, testInfo) => {
  const name = unique("pager");
  const setup = await adminApi();
  const defaultsBefore = await setup.query<{ timeoutMs: number | null; onTimeout: "reject" | "cancel" }>("policy.defaults");
  await setup.dispose();
  await logIn(page, undefined, undefined, "/notifications");
  await expect(page.getByRole("heading", { name: "Notifications" })).toBeVisible();
  await expect(page.getByRole("link", { name: "Notifications" })).toHaveAttribute("aria-current", "page");

  const form = page.getByRole("form", { name: "New channel" });
  await form.getByLabel("Name").fill(name);
  await form.getByLabel("Kind").selectOption("WEBHOOK");
  // A private address is refused by the server, and the reason is shown.
  await form.getByLabel("URL").fill("http://169.254.169.254/latest/meta-data");
  await form.getByRole("button", { name: "Add channel" }).click();
  await expect(page.getByTestId("channel-error")).toContainText("url is refused");

  await form.getByLabel("URL").fill(`${receiverUrl}/hooks/secret-path`);
  await form.getByRole("button", { name: "Add channel" }).click();
  await expect(page.getByTestId("signing-secret")).toContainText("whsec_");
  const channel = page.getByTestId("channel").filter({ hasText: name });
  await expect(channel).toContainText(`${receiverUrl}/… (the path is kept secret)`);
  await expect(channel).not.toContainText("secret-path");

  // Put the admin in a group, and route the default to it.
  await page.getByLabel("Groups of admin@example.com").fill("finance");
  await page.getByRole("listitem").filter({ hasText: "admin@example.com" }).getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("listitem").filter({ hasText: "admin@example.com" }).getByText("saved")).toBeVisible();
  const routing = page.getByRole("form", { name: "Default routing" });
  await routing.getByLabel("Group", { exact: true }).fill("finance");
  await routing.getByRole("button", { name: "Save default routing" }).click();
  await expect(page.getByTestId("default-route")).toContainText("asks group finance");

  try {
    const pending = await requestApproval({ tool: unique("notify_tool") });
    await expect.poll(() => posts.some((body) => body.includes(pending.approvalId))).toBe(true);
    await page.goto(`/approvals/${pending.approvalId}`);
    await expect(page.getByTestId("asked")).toHaveText("group finance (you are asked)");
    await expect(page.getByTestId("notifications")).toContainText(new RegExp(`posted to ${name} \\(${receiverUrl.replace(/[.]/g, "\\.")}\\) \\(new approval\\): delivered at`));
    await finalScreenshot(page, testInfo, "approval-notified");
  } finally {
    const admin = await adminApi();
    try {
      await admin.call("policy.setDefaults", { timeoutMs: defaultsBefore.timeoutMs, onTimeout: defaultsBefore.onTimeout, route: null });
    } finally {
      await admin.dispose();
    }
  }
});

test("the Notifications page fits a phone with no sideways scrolling", async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await logIn(page, undefined, undefined, "/notifications");
  await expect(page.getByRole("heading", { name: "Channels" })).toBeVisible();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await finalScreenshot(page, testInfo, "notifications-phone");
});

test("a channel that keeps failing is flagged on the Notifications page", async ({ page }, testInfo) => {
  const admin = await adminApi();
  const name = unique("dead-hook");
  // Nothing listens on port 9 here: each delivery is refused.
  const { channel } = await admin.call<{ channel: { channelId: string } }>("notification.createChannel", { name, kind: "SLACK", url: "http://127.0.0.1:9/hook", digestThreshold: 10, digestWindowSeconds: 1 });
  try {
    const { sessionId } = await agentCall<{ sessionId: string }>("session.open", { title: unique("pages") });
    const { requestId } = await agentCall<{ requestId: string }>("request.begin", { sessionId, agent: "pager" });
    for (const index of [1, 2, 3]) await agentCall("approval.request", { requestId, tool: unique(`page_${index}`), args: {} });
    await logIn(page, undefined, undefined, "/notifications");
    const flagged = page.getByTestId("channel").filter({ hasText: name }).getByTestId("channel-failing");
    await expect(async () => {
      await page.reload();
      await expect(flagged).toBeVisible({ timeout: 1_000 });
    }).toPass({ timeout: 20_000 });
    await expect(flagged).toContainText("Failing: its last 3 announcements were not delivered.");
    for (const [label, viewport] of [["1440x900", { width: 1440, height: 900 }], ["1280x800", { width: 1280, height: 800 }], ["390x844", { width: 390, height: 844 }]] as const) {
      await page.setViewportSize(viewport);
      await flagged.scrollIntoViewIfNeeded();
      await keepScreenshot(page, testInfo, `channel-failing-${label}`);
    }
  } finally {
    await admin.call("notification.deleteChannel", { channelId: channel.channelId });
    await admin.dispose();
  }
});
