// The console under its Content-Security-Policy, in Chromium: another page
// cannot frame it, every page works without a single CSP violation, login
// returns only to the console's own pages, and repeated wrong passwords are
// told when to retry.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test, type Page } from "@playwright/test";
import { ADMIN_EMAIL, ADMIN_PASSWORD, BASE_URL } from "./fixtures";
import { awaitDecision, finalScreenshot, inboxRow, logIn, logInWithForm, loginFormReady, requestApproval, sendNow, unique } from "./helpers";

const detail = (page: Page) => page.getByRole("region", { name: "Approval detail" });

/** Console errors, uncaught page errors and CSP violations of a page, from its first script on. */
async function watchForProblems(page: Page): Promise<string[]> {
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()} (${message.location().url})`);
  });
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  await page.exposeFunction("reportCspViolation", (text: string) => problems.push(`csp: ${text}`));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      (window as unknown as { reportCspViolation(text: string): void }).reportCspViolation(`${event.violatedDirective} blocked ${event.blockedURI}`);
    });
  });
  return problems;
}

test("a page on another origin of the same site cannot frame the logged-in inbox", async ({ page }, testInfo) => {
  await logIn(page);
  // A real server on another port of the same host: same site, so the Lax
  // session cookie goes along, and Chromium treats both as the local network.
  const framerServer = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" }).end(`<!doctype html><title>framer</title><iframe id="victim" src="${BASE_URL}/" width="800" height="600"></iframe>`);
  });
  await new Promise<void>((resolve) => framerServer.listen(0, "127.0.0.1", resolve));
  try {
    const framer = `http://127.0.0.1:${(framerServer.address() as AddressInfo).port}/`;
    const refused = page.waitForEvent("console", (message) => message.text().includes("frame-ancestors 'none'"));
    await page.goto(framer);
    await refused;
    // Chromium replaces a refused frame with its own error page.
    await expect.poll(() => page.frames().map((frame) => frame.url())).toEqual([framer, "chrome-error://chromewebdata/"]);
    await expect(page.frameLocator("#victim").getByTestId("operator-identity")).toHaveCount(0);
    await finalScreenshot(page, testInfo, "framed");
  } finally {
    framerServer.close();
  }
});

test("the console works under its CSP: login, inbox, deciding an approval, sessions and audit, with no violation or error", async ({ page }, testInfo) => {
  const problems = await watchForProblems(page);
  const tool = unique("csp_tool");
  const pending = await requestApproval({ tool, args: { to: "a@example.com" } });

  await logInWithForm(page);
  const scriptsWithNonce = await page.evaluate(() => [...document.scripts].filter((script) => script.nonce).length);
  expect(scriptsWithNonce).toBeGreaterThan(0);

  // Most urgent first puts the oldest of many waiting approvals on top: find this one by name.
  await page.getByLabel("Filter by tool").fill(tool);
  // The filter applies after a short pause; decide only once it has (or the inbox would move on to the next approval).
  await expect(page.getByRole("list", { name: "Pending approvals" }).getByRole("listitem")).toHaveCount(1);
  await inboxRow(page, tool).click();
  await expect(detail(page).getByLabel("Proposed arguments as JSON")).toContainText('"a@example.com"');
  await detail(page).getByRole("button", { name: /^Approve a$/ }).click();
  await sendNow(page);
  await expect(page.getByTestId("decision-banner")).toContainText(`Approved by you (${ADMIN_EMAIL})`);
  expect((await awaitDecision(pending.approvalId, 0)).status).toBe("APPROVED");

  await page.getByRole("link", { name: "Sessions" }).click();
  await expect(page.getByRole("table", { name: "Sessions" })).toBeVisible();
  await page.goto(`/sessions/${pending.sessionId}`);
  await expect(page.getByRole("treeitem").first()).toBeVisible();
  await page.goto("/audit");
  await expect(page.getByText("approval.decided").first()).toBeVisible();
  await expect(page.getByRole("status", { name: "Connection: Live" })).toBeVisible();

  expect(problems).toEqual([]);
  await finalScreenshot(page, testInfo);
});

for (const next of ["/%5Cevil.example", "/%09/evil.example", "/.//evil.example", "https://evil.example/"]) {
  test(`after login, next=${next} stays on the console`, async ({ page }) => {
    // A navigation that leaves would fail here rather than reach the network.
    await page.route((url) => url.hostname === "evil.example", (route) => route.abort());
    await page.goto(`/login?next=${next}`);
    await loginFormReady(page);
    await page.getByLabel("Email").fill(ADMIN_EMAIL);
    await page.getByLabel("Password").fill(ADMIN_PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await expect(page.getByTestId("operator-identity")).toBeVisible();
    expect(new URL(page.url()).origin).toBe(BASE_URL);
  });
}

test("repeated wrong passwords are refused with when to try again", async ({ page }, testInfo) => {
  const email = `${unique("nobody")}@example.com`;
  await page.goto("/login");
  await loginFormReady(page);
  await page.getByLabel("Email").fill(email);
  const error = page.locator("form").getByRole("alert");
  const submit = async (password: string) => {
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Log in" }).click();
    await expect(page.getByRole("button", { name: "Log in" })).toBeEnabled();
  };
  for (let attempt = 1; attempt <= 5; attempt++) {
    await submit(`guess-${attempt}`);
    await expect(error).toHaveText("email or password is wrong");
  }
  // The next attempts open waits of one, then two seconds: one of them is refused.
  for (let attempt = 6; attempt <= 9 && !(await error.textContent())?.includes("too many"); attempt++) await submit(`guess-${attempt}`);
  await expect(error).toContainText(new RegExp(`too many failed logins for ${email.replace(/[.]/g, "\\.")} from \\S+; try again in`));
  await finalScreenshot(page, testInfo);
});

test("a console page's policy runs scripts by a nonce fresh for each response; the API's allows no content at all", async () => {
  const nonceOf = async (path: string) => {
    const response = await fetch(`${BASE_URL}${path}`);
    await response.body?.cancel();
    const policy = response.headers.get("content-security-policy") ?? "";
    expect(policy).toContain("frame-ancestors 'none'");
    return /script-src 'self' 'nonce-([A-Za-z0-9+/=]+)' 'strict-dynamic'/.exec(policy)?.[1];
  };
  const [first, second] = [await nonceOf("/login"), await nonceOf("/login")];
  expect(first).toBeDefined();
  expect(second).toBeDefined();
  expect(first).not.toBe(second);
  const api = await fetch(`${BASE_URL}/api/trpc/auth.me`);
  await api.body?.cancel();
  expect(api.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
});
