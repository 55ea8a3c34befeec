// The SDK as its users get it: packed with `npm pack`, installed from the
// tarball into a scratch project outside this repository, type-checked there
// against its declarations, and its README's examples run against a real server.
// The package does not depend on the database: npm test runs it on the embedded one only.
import { execFile, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { startAgent } from "./agent-process.ts";
import type { OperatorClient } from "./clients.ts";
import { startMessagesApi } from "./anthropic-messages-standin.ts";
import { AGENT_KEY } from "./harness.ts";
import { describeWith, needsEmbedded } from "./requires.ts";
import { useTestServer, type TestServer } from "./server.ts";

const run = promisify(execFile);
const repository = path.resolve(import.meta.dirname, "..");
const npm = (args: string[], cwd: string) => run("npm", args, { cwd, maxBuffer: 16 * 1024 * 1024 });
/** The frameworks the adapters take as optional peers (sdk/package.json), and the Node types the user's project compiles with. */
const FRAMEWORKS = [...Object.keys((JSON.parse(readFileSync(path.join(repository, "sdk/package.json"), "utf8")) as { peerDependencies: Record<string, string> }).peerDependencies), "@types/node"];

let test: TestServer;
let operator: OperatorClient;
useTestServer((server, client) => {
  test = server;
  operator = client;
});

describeWith(needsEmbedded())("the packed SDK (@tollgate/sdk)", () => {
  let scratch: string;
  let packed: { filename: string; files: { path: string }[] };

  beforeAll(async () => {
    scratch = await mkdtemp(path.join(tmpdir(), "tollgate-sdk-user-"));
    // prepack builds dist/ first.
    const { stdout } = await npm(["pack", "--workspace", "@tollgate/sdk", "--pack-destination", scratch, "--json"], repository);
    packed = (JSON.parse(stdout) as (typeof packed)[])[0]!;
    await writeFile(path.join(scratch, "package.json"), JSON.stringify({ name: "sdk-user", private: true, type: "module" }));
    // The package with the dependencies it declares, from the registry (or npm's cache).
    await npm(["install", "--no-audit", "--no-fund", "--prefer-offline", `./${packed.filename}`], scratch);
    // The frameworks its adapters take as optional peers, as a user has them installed: linked
    // from this repository's node_modules (the versions its lockfile holds) rather than
    // installed again, which unpacked 646 MB (the Claude Agent SDK's 417) for 36 CPU-seconds.
    for (const framework of FRAMEWORKS) {
      const link = path.join(scratch, "node_modules", framework);
      await mkdir(path.dirname(link), { recursive: true });
      await symlink(path.join(repository, "node_modules", framework), link, "dir");
    }
  }, 480_000);

  afterAll(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it("sdk package: holds its build, sources and README, and nothing that imports the server", async () => {
    const files = packed.files.map((file) => file.path);
    expect(files).toEqual(
      expect.arrayContaining(["package.json", "README.md", "dist/index.js", "dist/index.d.ts", "dist/receipts.js", "dist/webhook-signature.js", "dist/adapters/langgraph.js"]),
    );
    expect(files.filter((file) => !/^(package\.json|README\.md|dist\/|src\/)/.test(file))).toEqual([]);
    expect(files.filter((file) => file.endsWith(".test.ts"))).toEqual([]);
    for (const file of files.filter((name) => name.endsWith(".js") || name.endsWith(".d.ts"))) {
      const text = await readFile(path.join(scratch, "node_modules/@tollgate/sdk", file), "utf8");
      // Relative imports only: the MCP SDK's own "@modelcontextprotocol/sdk/server/..." are a dependency's.
      expect(text, file).not.toMatch(/from ["']\.[^"']*\/server\//);
    }
  });

  it("sdk package: a TypeScript project outside the repository type-checks against its declarations", async () => {
    await writeFile(
      path.join(scratch, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { module: "nodenext", moduleResolution: "nodenext", target: "ES2023", strict: true, noEmit: true, types: ["node"] }, include: ["user.ts"] }),
    );
    await writeFile(
      path.join(scratch, "user.ts"),
      `import { createTollgate, type GateOutcome } from "@tollgate/sdk";
import { createReceiptVerifier, argsSha256 } from "@tollgate/sdk/receipts";
import { verifyWebhook } from "@tollgate/sdk/webhooks";
import { runWithApprovals, type LangGraphRunResult } from "@tollgate/sdk/langgraph";

const tollgate = createTollgate({ url: "http://localhost:3000", apiKey: "tgk_example" });
export async function example(): Promise<GateOutcome<{ sent: boolean }>> {
  const { sessionId } = await tollgate.openSession({ title: "typed" });
  const request = await tollgate.begin({ sessionId, agent: "mailer" });
  const status: "PENDING" | "APPROVED" | "REJECTED" | "EXPIRED" | "CANCELED" = (await tollgate.call("approval.await", { approvalId: "apr_x", timeoutMs: 0 })).status;
  // @ts-expect-error approvalId is a string: the declarations are typed, not any
  await tollgate.call("approval.await", { approvalId: 1 });
  void status;
  return request.gate("send_email", { to: "a@example.com" }, async (_args, decision) => ({ sent: decision.action === "approve" }));
}
export const runs: (typeof runWithApprovals)[] = [runWithApprovals];
export type Ran = LangGraphRunResult<{ sentTo: string }>;
export const checks = [createReceiptVerifier({ url: "http://localhost:3000" }).jwksUrl, argsSha256({ a: 1 }), verifyWebhook("{}", "t=1,v1=00", "tgk_example")];
`,
    );
    const tsc = path.join(repository, "node_modules/typescript/bin/tsc");
    const checked = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: scratch }).catch((error: { stdout: string }) => error);
    expect("stdout" in checked ? checked.stdout : "").toBe("");
  }, 180_000);

  type Decision = { action: "approve" | "reject" | "edit" | "respond"; args?: unknown; message?: string };
  /** Every runnable example in the README, found by the entry point it imports: what a person does, and what it then prints. */
  const EXAMPLES: { entry: string; tool: string; agent: string; decide: Decision | (() => Decision); prints: string; env?: () => Promise<Record<string, string>> }[] = [
    {
      entry: "@tollgate/sdk",
      tool: "send_email",
      agent: "mailer",
      decide: { action: "edit", args: { to: "ada@example.com", subject: "Your refund of 100 EUR" } },
      prints: "executed { sent: true, to: 'ada@example.com' }",
    },
    {
      // The tool side verifies the receipt against the edited arguments: an edit the receipt did not name would throw.
      entry: "@tollgate/sdk/receipts",
      tool: "send_email",
      agent: "verified-mailer",
      decide: { action: "edit", args: { to: "ada@example.com", subject: "Your refund of 100 EUR" } },
      prints: "executed { sent: true, to: 'ada@example.com' }",
    },
    { entry: "@tollgate/sdk/langgraph", tool: "send_email", agent: "refund-graph", decide: { action: "edit", args: { to: "ada.lovelace@example.com" } }, prints: "ada.lovelace@example.com" },
    { entry: "@tollgate/sdk/openai-agents", tool: "refund", agent: "support", decide: { action: "approve" }, prints: "Refund tool said: refunded 40 on order 1001" },
    { entry: "@tollgate/sdk/ai-sdk", tool: "refund", agent: "refund-bot", decide: { action: "approve" }, prints: "refunded 30 EUR for order 42" },
    {
      entry: "@tollgate/sdk/mcp",
      tool: "elicitation",
      agent: "calendar-agent",
      decide: { action: "edit", args: { attendee: "ada@example.com", minutes: 30 } },
      prints: '{"action":"accept","content":{"attendee":"ada@example.com","minutes":30}}',
    },
    { entry: "@tollgate/sdk/a2a", tool: "a2a_input", agent: "refund-agent", decide: { action: "respond", message: "order 1001" }, prints: "Refunded order 1001" },
    {
      // Claude Code, offline: the stand-in Messages API asks to write NOTES.md, then says it is written.
      entry: "@tollgate/sdk/claude-agent",
      tool: "Write",
      agent: "release-writer",
      decide: () => ({ action: "edit", args: { file_path: path.join(scratch, "NOTES.md"), content: "# Notes\n\n- final" } }),
      prints: "NOTES.md is written.",
      env: async () => {
        const api = await startMessagesApi([{ toolUse: { id: "toolu_notes", name: "Write", input: { file_path: path.join(scratch, "NOTES.md"), content: "# Notes\n\n- draft" } } }, { text: "NOTES.md is written." }]);
        closeAfter.push(api.close);
        const home = await mkdtemp(path.join(tmpdir(), "claude-home-"));
        closeAfter.push(() => rm(home, { recursive: true, force: true }));
        return { ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: "sk-ant-offline", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", HOME: home, CLAUDE_CONFIG_DIR: path.join(home, ".claude"), CLAUDE_CODE_TMPDIR: home };
      },
    },
  ];
  const closeAfter: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const close of closeAfter) await close();
  });

  it("sdk package: every runnable example in its README runs from the installed package, a person deciding in Tollgate", async () => {
    const readme = await readFile(path.join(repository, "sdk/README.md"), "utf8");
    const blocks = [...readme.matchAll(/```js runnable\n([\s\S]*?)```/g)].map((match) => match[1]!);
    const entryOf = (block: string) => [...block.matchAll(/from "(@tollgate\/sdk[^"]*)"/g)].map((match) => match[1]!).sort().at(-1);
    expect(blocks.map(entryOf).sort()).toEqual(EXAMPLES.map((example) => example.entry).sort());

    for (const example of EXAMPLES) {
      const file = `${example.entry.replace(/^@/, "").replace(/\W+/g, "-")}.mjs`;
      await writeFile(path.join(scratch, file), blocks.find((block) => entryOf(block) === example.entry)!);
      const child = spawn(process.execPath, [file], {
        cwd: scratch,
        env: { ...process.env, TOLLGATE_URL: test.url, TOLLGATE_AGENT_KEY: AGENT_KEY, TOLLGATE_WORKSPACE_ID: test.server.bootstrap.workspaceId, ...(await example.env?.()) },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      child.stdout.on("data", (chunk) => (output += chunk));
      child.stderr.on("data", (chunk) => (output += chunk));
      const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));

      const pending = async () => (await operator.approval.list.query({ status: "PENDING", tool: example.tool, agent: example.agent })).items;
      await expect.poll(async () => (await pending()).length, { timeout: 90_000, message: `${example.entry} asks for ${example.tool}: ${output}` }).toBe(1);
      const [approval] = await pending();
      const decision = typeof example.decide === "function" ? example.decide() : example.decide;
      await operator.approval.decide.mutate({ approvalId: approval!.approvalId, ...decision } as never);

      expect(await exited, `${example.entry}: ${output}`).toBe(0);
      expect(output.trim(), example.entry).toBe(example.prints);
    }
    expect(await readFile(path.join(scratch, "NOTES.md"), "utf8")).toBe("# Notes\n\n- final");
  }, 480_000);

  it("sdk package: the README's OpenAI Agents example, killed (SIGKILL) while its approval waits and started again with the same runId, continues the run: one approval, the tool run once", async () => {
    const readme = await readFile(path.join(repository, "sdk/README.md"), "utf8");
    const block = [...readme.matchAll(/```js runnable\n([\s\S]*?)```/g)].map((match) => match[1]!).find((text) => text.includes('"@tollgate/sdk/openai-agents"'));
    expect(block).toContain('runId: "refund-1001"');
    // A run of its own: the examples' test above has ended the README's.
    await writeFile(path.join(scratch, "crash-safe-openai-agents.mjs"), block!.replace('runId: "refund-1001"', 'runId: "refund-1001-killed"'));
    const env = { TOLLGATE_URL: test.url, TOLLGATE_AGENT_KEY: AGENT_KEY };
    const pending = async () => (await operator.approval.list.query({ status: "PENDING", tool: "refund", agent: "support" })).items;

    const first = startAgent(path.join(scratch, "crash-safe-openai-agents.mjs"), env);
    onTestFinished(() => first.kill());
    await expect.poll(async () => (await pending()).length, { timeout: 90_000 }).toBe(1);
    await first.kill();
    const [approval] = await pending();

    const second = startAgent(path.join(scratch, "crash-safe-openai-agents.mjs"), env);
    // A failed test leaves no agent waiting behind it.
    onTestFinished(() => second.kill());
    await operator.approval.decide.mutate({ approvalId: approval!.approvalId, action: "approve" });
    expect(await second.exited, second.output()).toBe(0);
    expect(second.output().trim()).toBe("Refund tool said: refunded 40 on order 1001");
    // The continued run kept the session it began in: its one approval, run once (the execution claim), with what ran.
    const { items } = await operator.approval.list.query({ sessionId: approval!.sessionId, limit: 10 });
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ approvalId: approval!.approvalId, status: "APPROVED", executedArgs: { order: "1001", amount: 40 } });
  });

  it("sdk package: its tollgate-mcp bin, installed with the MCP SDK it needs, gates an MCP server's tool call for an MCP client", async () => {
    await writeFile(
      path.join(scratch, "greeter.mjs"),
      `import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
const server = new McpServer({ name: "greeter", version: "1.0.0" });
server.registerTool("greet", { description: "Greets someone" }, async () => ({ content: [{ type: "text", text: "hello" }] }));
await server.connect(new StdioServerTransport());
`,
    );
    const client = new Client({ name: "packaged", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: path.join(scratch, "node_modules/.bin/tollgate-mcp"),
        args: ["--url", test.url, "--state-dir", path.join(scratch, "mcp-state"), "--", process.execPath, "greeter.mjs"],
        env: { ...(process.env as Record<string, string>), TOLLGATE_AGENT_KEY: AGENT_KEY },
        cwd: scratch,
        stderr: "inherit",
      }),
    );
    const called = client.callTool({ name: "greet", arguments: {} });
    const pending = async () => (await operator.approval.list.query({ status: "PENDING", tool: "greet", agent: "greeter" })).items;
    await expect.poll(async () => (await pending()).length, { timeout: 90_000 }).toBe(1);
    await operator.approval.decide.mutate({ approvalId: (await pending())[0]!.approvalId, action: "approve" });
    expect(await called).toMatchObject({ content: [{ type: "text", text: "hello" }] });
    await client.close();
  });
});
