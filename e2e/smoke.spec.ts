// Smoke test of the built server: an agent opens a session over HTTP, and an
// operator logs in to the console (landing on the approval inbox) and sees it.
import { expect, test } from "@playwright/test";
import { ADMIN_EMAIL, ADMIN_IDENTITY, ADMIN_PASSWORD, AGENT_KEY, BASE_URL } from "./fixtures";
import { loginFormReady } from "./helpers";

async function logIn(page: import("@playwright/test").Page, password: string) {
  await loginFormReady(page);
  await page.getByLabel("Email").fill(ADMIN_EMAIL);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Log in" }).click();
}

test("an operator who logs in sees the session an agent just opened, with live updates connected", async ({
  page,
  request,
}) => {
  const title = `Smoke session ${Date.now()}`;

  // The agent side: plain JSON over HTTP with the bearer agent key.
  const opened = await request.post("/api/trpc/session.open", {
    headers: { Authorization: `Bearer ${AGENT_KEY}` },
    data: { title },
  });
  expect(opened.status(), await opened.text()).toBe(200);
  const body = (await opened.json()) as { result: { data: { sessionId: string } } };
  expect(body.result.data.sessionId).toMatch(/^ses_[0-9a-z]+$/);

  // The operator side: the dashboard sends an anonymous visitor to the login page.
  await page.goto("/");
  await expect(page).toHaveURL(`${BASE_URL}/login?next=%2F`);

  await logIn(page, ADMIN_PASSWORD);
  await expect(page).toHaveURL(`${BASE_URL}/`);

  await expect(page.getByTestId("operator-identity")).toHaveText(ADMIN_IDENTITY);
  const connection = page.getByRole("status", { name: /^Connection: / });
  await expect(connection).toHaveText("Live");
  await expect(connection).toHaveAccessibleName("Connection: Live");

  // The landing page is the approval inbox; the session is on the Sessions page.
  await expect(page.getByRole("tab", { name: /^Pending/ })).toHaveAttribute("aria-selected", "true");
  await page.getByRole("link", { name: "Sessions" }).click();
  const sessions = page.getByRole("table", { name: "Sessions" });
  await expect(sessions.getByRole("row").filter({ hasText: title }).getByRole("cell").first()).toHaveText(title);
});

test("a wrong password shows an error and keeps the operator on the login page", async ({ page }) => {
  await page.goto("/login");
  await logIn(page, "not-the-password");

  // Scoped to the form: Next.js's route announcer also has role=alert.
  const error = page.locator("form").getByRole("alert");
  await expect(error).toBeVisible();
  await expect(error).not.toBeEmpty();
  await expect(page).toHaveURL(`${BASE_URL}/login`);
  await expect(page.getByTestId("operator-identity")).toHaveCount(0);
});
