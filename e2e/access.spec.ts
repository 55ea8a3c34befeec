// An admin hands out and takes back access from the console: an agent key and
// a script token, each shown once, each working until revoked and refused
// right after, at a laptop's width and on a phone.
import { expect, test, type Page } from "@playwright/test";
import { ADMIN_PASSWORD, BASE_URL } from "./fixtures";
import { acceptInvitation, finalScreenshot, logIn, unique } from "./helpers";

const bearerStatus = async (path: string, secret: string, method: "GET" | "POST" = "GET") =>
  (
    await fetch(`${BASE_URL}/api/trpc/${path}`, {
      method,
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: method === "POST" ? "{}" : undefined,
    })
  ).status;

async function shownOnce(page: Page, label: RegExp): Promise<string> {
  const alert = page.getByRole("alert", { name: label });
  const secret = (await alert.getByTestId("shown-once").innerText()).trim();
  await alert.getByRole("button", { name: "Done" }).click();
  await expect(page.getByTestId("shown-once")).toHaveCount(0);
  return secret;
}

for (const [label, viewport] of [
  ["desktop", { width: 1280, height: 800 }],
  ["phone", { width: 390, height: 844 }],
] as const) {
  test(`${label}: an admin creates an agent key and a token from the console, and revoking each ends its access at once`, async ({ page }, testInfo) => {
    await page.setViewportSize(viewport);
    await logIn(page, undefined, undefined, "/access");
    await expect(page.getByRole("heading", { name: "Access" })).toBeVisible();

    const keyName = unique("billing agents");
    await page.getByLabel("Name (what runs with it)").fill(keyName);
    await page.getByRole("button", { name: "Create key" }).click();
    const key = await shownOnce(page, /New agent key/);
    expect(key).toMatch(/^tgk_[0-9A-Za-z]{30}_[0-9A-Za-z]{6}$/);
    expect(await bearerStatus("session.open", key, "POST")).toBe(200);
    const keyRow = page.getByTestId("agent-key").filter({ hasText: keyName });
    await expect(keyRow).toContainText(key.slice(0, 10));
    await expect(keyRow).not.toContainText(key);

    const tokenName = unique("nightly report");
    const tokenForm = page.getByRole("form", { name: "New token" });
    await tokenForm.getByLabel("Name").fill(tokenName);
    await tokenForm.getByLabel("Your password").fill("not my password");
    await tokenForm.getByRole("button", { name: "Create token" }).click();
    await expect(page.getByRole("alert").filter({ hasText: "the password is wrong" })).toBeVisible();
    await tokenForm.getByLabel("Your password").fill(ADMIN_PASSWORD);
    await tokenForm.getByRole("button", { name: "Create token" }).click();
    const token = await shownOnce(page, /New token/);
    expect(await bearerStatus("auth.me", token)).toBe(200);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
    await finalScreenshot(page, testInfo, `access-${label}`);

    await keyRow.getByRole("button", { name: `Revoke ${keyName}` }).click();
    await keyRow.getByRole("alertdialog").getByRole("button", { name: "Yes, revoke" }).click();
    await expect(keyRow).toContainText("revoked");
    expect(await bearerStatus("session.open", key, "POST")).toBe(401);

    const tokenRow = page.getByTestId("token").filter({ hasText: tokenName });
    await tokenRow.getByRole("button", { name: `Revoke token ${tokenName}` }).click();
    await expect(tokenRow).toContainText("revoked");
    expect(await bearerStatus("auth.me", token)).toBe(401);
  });
}

test("an admin adds an approver, changes their role, and disabling them ends their open console at once", async ({ page, browser }, testInfo) => {
  await logIn(page, undefined, undefined, "/access");
  const email = `${unique("approver")}@example.com`.toLowerCase();
  const form = page.getByRole("form", { name: "Invite a person" });
  await form.getByLabel("Email").fill(email);
  await form.getByLabel("Name").fill("Ana Approver");
  await form.getByLabel("Role").selectOption("OPERATOR");
  await form.getByRole("button", { name: "Invite" }).click();
  await acceptInvitation(page, browser, "ana's first password");
  const row = page.getByTestId("person").filter({ hasText: email });
  await expect(row.getByLabel(`Role of ${email}`)).toHaveValue("OPERATOR");

  const theirs = await browser.newContext();
  const theirPage = await theirs.newPage();
  await logIn(theirPage, email, "ana's first password");
  await expect(theirPage.getByText("Live")).toBeVisible();

  await row.getByLabel(`Role of ${email}`).selectOption("VIEWER");
  await expect(row.getByLabel(`Role of ${email}`)).toHaveValue("VIEWER");
  await row.getByRole("button", { name: `Disable ${email}` }).click();
  await row.getByRole("alertdialog").getByRole("button", { name: "Yes, disable" }).click();
  await expect(row).toContainText("disabled");
  // Their console hears its connection closed and goes to the login page.
  await expect(theirPage).toHaveURL(/\/login/, { timeout: 10_000 });
  await finalScreenshot(page, testInfo, "people");
  await theirs.close();
});
