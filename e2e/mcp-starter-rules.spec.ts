// A new workspace's Policies page offers starter rules for MCP servers: shown
// in words, added only when the admin clicks, and then the rules' MCP
// conditions (pinned tools, hints) show on their cards and in the editor.
// An admin pins the tool of an MCP call from its review screen.
import { createHash } from "node:crypto";
import { expect, test } from "@playwright/test";
import canonicalize from "canonicalize";
import { ADMIN_EMAIL, BASE_URL } from "./fixtures";
import { adminApi, agentCall, createOperator, finalScreenshot, logIn, unique } from "./helpers";

test("a new workspace's policy page offers MCP starter rules, which apply only when the admin clicks", async ({ page }, testInfo) => {
  const founder = await createOperator("ADMIN");
  // Signed in, with a workspace of its own (a new one has no rules), before any page is open:
  // a page open while its session is switched would be sent to the login.
  const headers = { origin: BASE_URL };
  const login = await page.request.post("/api/trpc/auth.login", { headers, data: { email: founder.email, password: founder.password } });
  expect(login.status(), await login.text()).toBe(200);
  const created = await page.request.post("/api/trpc/workspace.create", { headers, data: { name: unique("mcp-starter") } });
  expect(created.status(), await created.text()).toBe(200);
  const workspace = ((await created.json()) as { result: { data: { id: string } } }).result.data;
  const switched = await page.request.post("/api/trpc/auth.switchWorkspace", { headers, data: { workspaceId: workspace.id } });
  expect(switched.status(), await switched.text()).toBe(200);

  await page.goto("/policies");
  const starter = page.getByRole("region", { name: "Starter rules for MCP servers" });
  await expect(starter).toContainText("Pinned read-only MCP tools are approved");
  await expect(starter).toContainText("pinned MCP tools only, MCP hint readOnlyHint: true");
  for (const [width, height] of [
    [1440, 900],
    [1280, 800],
    [390, 844],
  ] as const) {
    await page.setViewportSize({ width, height });
    await testInfo.attach(`starter-rules-${width}x${height}`, { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  // Nothing was applied by itself.
  await expect(page.getByRole("list", { name: "Rules" })).toHaveCount(0);

  await starter.getByRole("button", { name: "Add these 2 rules" }).click();
  const card = page.getByRole("article", { name: "Rule Pinned read-only MCP tools are approved" });
  await expect(card).toContainText("pinned MCP tools only");
  await expect(page.getByRole("article", { name: "Rule Pinned destructive MCP tools need an admin" })).toContainText("MCP hint destructiveHint: true");
  await expect(starter).toHaveCount(0);

  // The editor shows the conditions it keeps.
  await page.getByRole("button", { name: "Edit Pinned read-only MCP tools are approved" }).click();
  await expect(page.getByLabel("Only tools an admin pinned")).toBeChecked();
  await expect(page.getByLabel("Read-only (readOnlyHint)")).toHaveValue("true");
  await testInfo.attach("starter-rules-editor", { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });
  await finalScreenshot(page, testInfo);
});

test("an admin pins an MCP tool from the review screen after reading its hash and description, and the approval then says it is pinned", async ({ page }, testInfo) => {
  const agent = unique("files");
  const tool = unique("read_file");
  const definition = {
    name: tool,
    description: "Reads a file under the notes folder",
    annotations: { title: "Read a file", readOnlyHint: true },
    inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  };
  // What tollgate-mcp sends with a call: the tool as its server lists it.
  const { sessionId } = await agentCall<{ sessionId: string }>("session.open", { title: unique("mcp") });
  const begun = await agentCall<{ requestId: string }>("request.begin", { sessionId, agent, framework: "mcp" });
  const { approvalId } = await agentCall<{ approvalId: string }>("approval.request", {
    requestId: begun.requestId,
    tool,
    args: { path: "/notes/today.md" },
    annotations: definition.annotations,
    toolDefinition: definition,
  });
  const sha256 = createHash("sha256").update(canonicalize(definition)!).digest("hex");

  await page.setViewportSize({ width: 1440, height: 900 });
  await logIn(page, undefined, undefined, `/approvals/${approvalId}`);
  const section = page.getByRole("region", { name: "MCP tool, as the server listed it" });
  await expect(section).toContainText(`${tool} of the server ${agent}`);
  await expect(section).toContainText("not pinned");
  await section.getByRole("button", { name: "Pin this tool…" }).click();
  const confirm = section.getByRole("group", { name: "Pin this tool" });
  await expect(confirm.getByTestId("pin-sha256")).toHaveText(sha256);
  await expect(confirm.getByTestId("pin-description")).toHaveText(definition.description);
  await testInfo.attach("pin-tool-1440x900", { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });
  await page.setViewportSize({ width: 390, height: 844 });
  // The confirm button in view, above the decision bar that stays at the bottom of a phone's screen.
  await confirm.getByRole("button", { name: `Pin ${tool}` }).evaluate((button) => button.scrollIntoView({ block: "center" }));
  await testInfo.attach("pin-tool-390x844", { body: await page.screenshot(), contentType: "image/png" });

  await confirm.getByRole("button", { name: `Pin ${tool}` }).click();
  await expect(section.getByTestId("mcp-tool-pinned")).toHaveText(`pinned by ${ADMIN_EMAIL}`);
  await expect(section.getByRole("button", { name: "Pin this tool…" })).toHaveCount(0);
  const admin = await adminApi();
  const pins = await admin.query<{ items: { agent: string; tool: string; sha256: string }[] }>("policy.pins");
  await admin.dispose();
  expect(pins.items.filter((pin) => pin.tool === tool)).toEqual([expect.objectContaining({ agent, tool, sha256 })]);
  await finalScreenshot(page, testInfo);
});
