// One glance: at a laptop's widths and on a phone, the call chain (each level's
// agent, what it was asked, the session's title), the first lines of a long
// statement and the decision buttons are on screen together, without scrolling.
import { expect, test, type Page } from "@playwright/test";
import { agentCall, agentWaits, finalScreenshot, logIn, unique } from "./helpers";

const STATEMENT = [
  "DELETE FROM documents",
  ...Array.from({ length: 28 }, (_, index) => `  ${index === 0 ? "WHERE" : "   OR"} status = 'state_${index}' -- line ${index + 2}`),
  "RETURNING id;",
].join("\n");

/** O1 asked A2, which asks to run a 30-line statement, in a session with a title. */
async function chainAskingForSql() {
  const title = unique("Ticket TG-42 purge drafts");
  const { sessionId } = await agentCall<{ sessionId: string }>("session.open", { title });
  const o1 = await agentCall<{ requestId: string }>("request.begin", { sessionId, agent: "O1", kind: "orchestrator", input: { ticket: "TG-42", ask: "purge drafts only" } });
  const a2 = await agentCall<{ requestId: string }>("request.begin", { sessionId, agent: "A2", parentRequestId: o1.requestId, input: "Delete the drafts older than a year\nand report how many" });
  const tool = unique("run_sql");
  const { approvalId } = await agentCall<{ approvalId: string }>("approval.request", { requestId: a2.requestId, tool, args: { statement: STATEMENT, database: "prod" } });
  // An agent waits for it, so the screen has no "no agent waiting" notice to show.
  agentWaits([approvalId]);
  return { title, tool, approvalId };
}

/** Whether a box lies within the screen, above the decision bar. */
async function aboveTheBar(page: Page, box: { y: number; height: number } | null) {
  const bar = (await page.getByTestId("decision-bar").boundingBox())!;
  expect(box).not.toBeNull();
  expect(box!.y).toBeGreaterThanOrEqual(0);
  expect(box!.y + box!.height).toBeLessThanOrEqual(bar.y);
}

for (const [label, viewport] of [
  ["1440", { width: 1440, height: 900 }],
  ["1280", { width: 1280, height: 800 }],
  ["phone", { width: 390, height: 844 }],
] as const) {
  test(`${label}: the chain, the first line of a 30-line statement and the buttons are in view together`, async ({ page }, testInfo) => {
    await page.setViewportSize(viewport);
    const { title, tool, approvalId } = await chainAskingForSql();
    await logIn(page, undefined, undefined, `/?approval=${approvalId}`);
    const detail = page.getByRole("article", { name: `Approval ${tool} by A2` });
    const approve = detail.getByRole("button", { name: /^Approve a$/ });
    await expect(approve).toBeVisible();
    const bar = (await page.getByTestId("decision-bar").boundingBox())!;
    expect(bar.y + bar.height).toBeLessThanOrEqual(viewport.height);
    // The connection's state is on screen at every width (first in the phone's sideways-scrolling header).
    await expect(page.getByRole("status", { name: "Connection: Live" })).toBeInViewport();

    // The chain, each level with what it was asked, under the session's title.
    const chain = detail.getByRole("list", { name: /Call chain/ });
    await expect(chain).toContainText("O1");
    await expect(chain).toContainText("ticket: TG-42 · ask: purge drafts only");
    await expect(chain).toContainText("Delete the drafts older than a year …");
    await expect(detail.getByTestId("chain-session")).toContainText(title);
    await aboveTheBar(page, await detail.getByTestId("chain-session").boundingBox());
    await aboveTheBar(page, await chain.boundingBox());

    // The statement as text with its line breaks: its first line in view, the rest folded.
    const statement = detail.getByTestId("long-text-statement");
    const text = statement.locator("pre");
    await expect(text).toContainText("DELETE FROM documents\n  WHERE status = 'state_0'");
    await expect(text).not.toContainText("RETURNING id;");
    const first = (await text.boundingBox())!;
    await aboveTheBar(page, { y: first.y, height: 24 });
    // Kept beside the test's own final screenshot, for a person to look at.
    await page.screenshot({ path: testInfo.outputPath(`glance-${label}.png`) });

    await statement.getByRole("button", { name: /^Show all 30 lines/ }).click();
    await expect(text).toContainText("RETURNING id;");
    // Folded open, the buttons stay in view while the statement scrolls under them.
    await text.getByText("RETURNING id;").scrollIntoViewIfNeeded();
    await expect(approve).toBeInViewport();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
    await finalScreenshot(page, testInfo, `unfolded-${label}`);
  });
}
