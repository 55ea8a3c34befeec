// An admin tried as a new user would: makes a second workspace from the
// console, switches into it, adds an approver, an agent key and a token there,
// then revokes each and sees access end at once; the first workspace's rows
// never show in the second.
import { expect, type Page, type Request, test } from "@playwright/test";
import { BASE_URL } from "./fixtures";
import { acceptInvitation, createOperator, finalScreenshot, logIn, requestApproval, unique } from "./helpers";

const bearerStatus = async (path: string, secret: string, method: "GET" | "POST" = "GET") =>
  (
    await fetch(`${BASE_URL}/api/trpc/${path}`, {
      method,
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: method === "POST" ? "{}" : undefined,
    })
  ).status;

/** Sends a request the browser made from the test instead, and gives its answer to hand back to the browser later. */
async function sendFromHere(request: Request) {
  const { host, connection, "content-length": length, ...headers } = await request.allHeaders();
  const answer = await fetch(request.url(), { method: request.method(), headers, body: request.postData() });
  return {
    status: answer.status,
    headers: { "content-type": answer.headers.get("content-type") ?? "application/json", "set-cookie": answer.headers.getSetCookie().join("\n") },
    body: await answer.text(),
  };
}

/** A fresh admin logged in on /access, live, who has just made a second workspace (its name returned) and not switched to it. */
async function adminWithSecondWorkspace(page: Page, prefix: string): Promise<string> {
  const founder = await createOperator("ADMIN");
  await logIn(page, founder.email, founder.password, "/access");
  const workspaceName = unique(prefix);
  await page.getByRole("form", { name: "New workspace" }).getByLabel("Name").fill(workspaceName);
  await page.getByRole("button", { name: "Create workspace" }).click();
  await expect(page.getByRole("status").filter({ hasText: "you are its admin" })).toBeVisible();
  await expect(page.getByRole("status", { name: "Connection: Live" })).toBeVisible();
  return workspaceName;
}

for (const [label, viewport] of [
  ["desktop", { width: 1280, height: 800 }],
  ["phone", { width: 390, height: 844 }],
] as const) {
  test(`${label}: a second workspace made, filled and emptied from the console`, async ({ page, browser }, testInfo) => {
    await page.setViewportSize(viewport);
    // A fresh admin, so the workspace this one lands in on login stays theirs alone.
    const founder = await createOperator("ADMIN");
    const firstWorkspaceTool = unique("first_workspace_tool");
    await requestApproval({ tool: firstWorkspaceTool });
    await logIn(page, founder.email, founder.password, "/access");

    const workspaceName = unique("Payments");
    await page.getByRole("form", { name: "New workspace" }).getByLabel("Name").fill(workspaceName);
    await page.getByRole("button", { name: "Create workspace" }).click();
    await expect(page.getByRole("status").filter({ hasText: "you are its admin" })).toBeVisible();
    await page.getByRole("button", { name: `Switch to ${workspaceName}` }).click();

    // The console reloads in the new workspace: named in the header, empty inbox.
    await expect(page).toHaveURL(`${BASE_URL}/`);
    await expect(page.getByTestId("workspace-switcher")).toHaveValue(/^ws_/);
    await expect(page.getByTestId("workspace-switcher").locator("option:checked")).toHaveText(workspaceName);
    await expect(page.getByText("No approvals are waiting.")).toBeVisible();
    await expect(page.getByText(firstWorkspaceTool)).toHaveCount(0);
    await page.screenshot({ path: testInfo.outputPath(`inbox-in-new-workspace-${label}.png`) });
    await page.goto("/access");

    const approverEmail = `${unique("approver")}@example.com`.toLowerCase();
    const person = page.getByRole("form", { name: "Invite a person" });
    await person.getByLabel("Email").fill(approverEmail);
    await person.getByLabel("Name").fill("Pat Payments");
    await person.getByLabel("Role").selectOption("OPERATOR");
    await person.getByRole("button", { name: "Invite" }).click();
    await acceptInvitation(page, browser, "pat's first password");
    const row = page.getByTestId("person").filter({ hasText: approverEmail });
    await expect(row.getByLabel(`Role of ${approverEmail}`)).toHaveValue("OPERATOR");

    const keyName = unique("payments agents");
    await page.getByLabel("Name (what runs with it)").fill(keyName);
    await page.getByRole("button", { name: "Create key" }).click();
    const keyAlert = page.getByRole("alert", { name: /New agent key/ });
    const key = (await keyAlert.getByTestId("shown-once").innerText()).trim();
    await keyAlert.getByRole("button", { name: "Done" }).click();
    expect(await bearerStatus("session.open", key, "POST")).toBe(200);

    const tokenName = unique("payments report");
    const tokenForm = page.getByRole("form", { name: "New token" });
    await tokenForm.getByLabel("Name").fill(tokenName);
    await tokenForm.getByLabel("Your password").fill(founder.password);
    await tokenForm.getByRole("button", { name: "Create token" }).click();
    const tokenAlert = page.getByRole("alert", { name: /New token/ });
    const token = (await tokenAlert.getByTestId("shown-once").innerText()).trim();
    await tokenAlert.getByRole("button", { name: "Done" }).click();
    expect(await bearerStatus("auth.me", token)).toBe(200);

    const theirs = await browser.newContext();
    const theirPage = await theirs.newPage();
    await logIn(theirPage, approverEmail, "pat's first password");
    await expect(theirPage.getByTestId("workspace-name")).toHaveText(workspaceName);
    await expect(theirPage.getByText("Live")).toBeVisible();

    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
    await finalScreenshot(page, testInfo, `workspaces-${label}`);

    const keyRow = page.getByTestId("agent-key").filter({ hasText: keyName });
    await keyRow.getByRole("button", { name: `Revoke ${keyName}` }).click();
    await keyRow.getByRole("alertdialog").getByRole("button", { name: "Yes, revoke" }).click();
    await expect(keyRow).toContainText("revoked");
    expect(await bearerStatus("session.open", key, "POST")).toBe(401);

    const tokenRow = page.getByTestId("token").filter({ hasText: tokenName });
    await tokenRow.getByRole("button", { name: `Revoke token ${tokenName}` }).click();
    await expect(tokenRow).toContainText("revoked");
    expect(await bearerStatus("auth.me", token)).toBe(401);

    await row.getByRole("button", { name: `Disable ${approverEmail}` }).click();
    await row.getByRole("alertdialog").getByRole("button", { name: "Yes, disable" }).click();
    await expect(row).toContainText("disabled");
    await expect(theirPage).toHaveURL(/\/login/, { timeout: 10_000 });
    await theirs.close();
  });
}

test("switching workspaces lands in the new one even when the old session's check is refused first", async ({ page }) => {
  const workspaceName = await adminWithSecondWorkspace(page, "Refunds");

  // The server ends the old session and closes its live connection while it
  // answers the switch, so the page checks its session as the new cookie comes:
  // this check goes out with the old cookie and its refusal lands after the
  // switch's answer. Both calls are sent from here, so the browser's cookies
  // change only when their answers are handed to it, in that order.
  let oldSessionChecked!: () => void;
  const checkSent = new Promise<void>((resolve) => (oldSessionChecked = resolve));
  const switchAnswered = page.waitForResponse((response) => response.url().includes("auth.switchWorkspace"));
  await page.route("**/api/trpc/auth.switchWorkspace*", async (route) => {
    const answer = await sendFromHere(route.request());
    await checkSent;
    await route.fulfill(answer);
  });
  await page.route("**/api/trpc/auth.me*", async (route) => {
    oldSessionChecked();
    const refusal = await sendFromHere(route.request());
    expect(refusal.status).toBe(401);
    await switchAnswered;
    await route.fulfill(refusal);
  }, { times: 1 });
  await page.getByRole("button", { name: `Switch to ${workspaceName}` }).click();

  await expect(page).toHaveURL(`${BASE_URL}/`);
  await expect(page.getByTestId("workspace-switcher").locator("option:checked")).toHaveText(workspaceName);
});

test("a switch whose answer is lost after the old session ended sends the operator to log in, not to a page that never loads", async ({ page }) => {
  const workspaceName = await adminWithSecondWorkspace(page, "Disputes");

  // The server switches (and ends the old session); the page's check of the old
  // session is refused while the switch is under way; then the answer is lost.
  const oldSessionRefused = page.waitForResponse((response) => response.url().includes("auth.me") && response.status() === 401);
  await page.route("**/api/trpc/auth.switchWorkspace*", async (route) => {
    await sendFromHere(route.request());
    await oldSessionRefused;
    await route.abort("connectionreset");
  });
  await page.getByRole("button", { name: `Switch to ${workspaceName}` }).click();

  await expect(page).toHaveURL(/\/login/);
});
