// An admin invites a person from the Access page: with no SMTP the link is
// shown once to copy, the invitation waits in the pending list until accepted
// or withdrawn, and the link opens the accept page (which never says whether
// the address has an account). At 1440x900, 1280x800 and 390x844.
import { expect, test } from "@playwright/test";
import { finalScreenshot, logIn, unique } from "./helpers";

for (const [label, viewport] of [
  ["1440x900", { width: 1440, height: 900 }],
  ["1280x800", { width: 1280, height: 800 }],
  ["390x844", { width: 390, height: 844 }],
] as const) {
  test(`${label}: an invitation's link is shown to copy, waits in the pending list, opens the accept page, and withdrawn it stops working`, async ({ page, browser }, testInfo) => {
    await page.setViewportSize(viewport);
    await logIn(page, undefined, undefined, "/access");
    const email = `${unique("invited")}@example.com`.toLowerCase();
    const form = page.getByRole("form", { name: "Invite a person" });
    await form.getByLabel("Email").fill(email);
    await form.getByLabel("Name").fill("Ivy Invited");
    await form.getByRole("button", { name: "Invite" }).click();
    const shown = page.getByRole("alert", { name: /Invitation link for/ });
    const link = (await shown.getByTestId("shown-once").innerText()).trim();
    expect(link).toMatch(/\/invite#tgi_/);
    const pending = page.getByTestId("invitation").filter({ hasText: email });
    await expect(pending).toBeVisible();
    await shown.scrollIntoViewIfNeeded();
    await finalScreenshot(page, testInfo, `access-${label}`);

    const theirs = await browser.newContext({ viewport });
    const invitee = await theirs.newPage();
    await invitee.goto(link);
    await expect(invitee.getByText(email)).toBeVisible();
    await expect(invitee.getByRole("button", { name: "Join" })).toBeVisible();
    await finalScreenshot(invitee, testInfo, `invite-${label}`);

    await pending.getByRole("button", { name: `Withdraw the invitation of ${email}` }).click();
    await expect(pending).toHaveCount(0);
    await invitee.reload();
    await expect(invitee.getByText("this invitation link is not valid")).toBeVisible();
    await theirs.close();
  });
}
