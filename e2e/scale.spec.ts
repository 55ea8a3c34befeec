// The console at scale: one session with a 2,001-task tree (a root orchestrator,
// 20 sub-orchestrators, 1,980 agents) and 1,000 pending approvals. The lists are
// virtualized, so the page keeps a few dozen rows in the DOM and stays responsive.
import { expect, test } from "@playwright/test";
import { agentBatch, agentCall, finalScreenshot, logIn, unique } from "./helpers";

test.describe.configure({ timeout: 120_000 });

test("1,000 pending approvals and a 2,000-task tree stay responsive", async ({ page }, testInfo) => {
  const title = unique("Scale");
  const { sessionId } = await agentCall<{ sessionId: string }>("session.open", { title });
  const root = await agentCall<{ taskId: string; requestId: string }>("request.begin", { sessionId, agent: "root", kind: "orchestrator" });
  const subs = await agentBatch<{ requestId: string }>(
    "request.begin",
    Array.from({ length: 20 }, (_, index) => ({ sessionId, agent: `orch-${index}`, kind: "orchestrator", parentRequestId: root.requestId })),
  );
  const agents = await agentBatch<{ requestId: string }>(
    "request.begin",
    Array.from({ length: 1980 }, (_, index) => ({ sessionId, agent: `agent-${index}`, parentRequestId: subs[index % 20]!.requestId })),
  );
  const tool = unique("scale_tool");
  // Left pending in a session of their own (canceling 2,000 tasks would cost more than
  // the test; every other test filters by its own session or tool names). The long
  // timeout lets them expire on their own, even on a reused server.
  await agentBatch(
    "approval.request",
    agents.slice(0, 1000).map((agent, index) => ({ requestId: agent.requestId, tool, args: { index, note: "x".repeat(40) }, timeoutMs: 15 * 60_000 })),
    50,
  );

  await logIn(page);
  await expect(page.getByRole("tab", { name: /^Pending/ })).toHaveText(/Pending \(\d{4}\)/);
  await page.getByLabel("Filter by session").selectOption({ label: title });
  await expect(page.getByRole("tab", { name: /^Pending/ })).toHaveText("Pending (1000)");
  const list = page.getByRole("list", { name: "Pending approvals" });
  expect(await list.getByRole("listitem").count()).toBeLessThan(60);

  // Keyboard through the list: 30 moves land on the 30th row, scrolled into view, and
  // the DOM still holds only the rows around the viewport. (How fast is a benchmark's
  // question, not a test's.)
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  for (let step = 0; step < 30; step++) await page.keyboard.press("j");
  const current = list.getByRole("listitem").filter({ has: page.locator("[aria-current=true]") });
  await expect(current).toHaveAttribute("aria-posinset", "30");
  await expect(current).toBeInViewport();
  expect(await list.getByRole("listitem").count()).toBeLessThan(60);

  // The bottom of the list is reachable and rendered on demand.
  await list.evaluate((element) => element.parentElement!.scrollTo({ top: 1e9 }));
  await expect(list.getByRole("listitem").last()).toBeVisible();
  await finalScreenshot(page, testInfo, "inbox-1000");

  await page.goto(`/sessions/${sessionId}`);
  const tree = page.getByRole("tree", { name: "Task tree" });
  await expect(page.getByText("2001 shown · 1000 waiting for approval")).toBeVisible({ timeout: 15_000 });
  expect(await tree.getByRole("treeitem").count()).toBeLessThan(60);
  await expect(tree.getByRole("treeitem", { name: "Orchestrator root, PAUSED, on the paused path" })).toBeVisible();
  await page.getByRole("button", { name: "Jump to paused task" }).click();
  await expect(tree.getByRole("treeitem", { name: /^Agent agent-\d+, PAUSED, waiting for approval$/ }).first()).toBeVisible();
  await finalScreenshot(page, testInfo, "tree-2000");
});
