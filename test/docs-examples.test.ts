// The shell examples marked runnable in README.md and docs/*.md run, as printed,
// against a real server: they are written for the demo (its address, admin and
// agent key, a cookie jar in /tmp), which this test replaces with its own
// server's. An approval an example asks for is approved here, as a person in
// the console would.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OperatorClient } from "./clients.ts";
import { codeBlocks, documentationPages, readPage, type CodeBlock } from "./docs.ts";
import { ADMIN, AGENT_KEY } from "./harness.ts";
import { useTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let operator: OperatorClient;
useTestServer((server, client) => {
  test = server;
  operator = client;
});

/** What each page's examples must print, beyond running without an error answer. */
const PRINTS: Record<string, RegExp> = {
  "docs/security.md": /\D403\n$/,
  "docs/policies.md": /"name":"no other mail","outcome":"reject"/,
  "docs/agents.md": /"requestId":"req_[^"]+"/,
};

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), "tollgate-docs-"));
});
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** The example as it runs here: the demo's address, login, key and cookie jar replaced by this test's. */
function forThisServer(block: CodeBlock): string {
  return block.text
    .replaceAll("http://localhost:3000", test.url)
    .replaceAll("/tmp/tollgate.jar", path.join(scratch, "tollgate.jar"))
    .replaceAll("admin@tollgate.local", ADMIN.email)
    .replaceAll("tollgate-demo", ADMIN.password)
    .replaceAll("tgk_demo_agent_key_for_local_use", AGENT_KEY);
}

async function runnableShellBlocks(): Promise<CodeBlock[]> {
  const blocks: CodeBlock[] = [];
  for (const page of (await documentationPages()).filter((name) => name !== "sdk/README.md")) {
    blocks.push(...codeBlocks(page, await readPage(page)).filter((block) => block.language === "sh" && block.mark === "runnable"));
  }
  return blocks;
}

describe("the documentation's shell examples", () => {
  it("docs examples: every runnable shell block runs against a real server, with no error answer", async () => {
    const blocks = await runnableShellBlocks();
    expect(blocks.map((block) => block.page).sort()).toEqual(Object.keys(PRINTS).sort());

    for (const block of blocks) {
      const child = spawn("bash", ["-e", "-o", "pipefail", "-c", forThisServer(block)], { stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      child.stdout.on("data", (chunk) => (output += chunk));
      child.stderr.on("data", (chunk) => (output += chunk));
      let exited = false;
      const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => ((exited = true), resolve(code))));
      // A person in the console: approves what the example asks for while it waits.
      while (!exited) {
        const { items } = await operator.approval.list.query({ status: "PENDING", limit: 10 });
        for (const approval of items) await operator.approval.decide.mutate({ approvalId: approval.approvalId, action: "approve" }).catch(() => undefined);
        await Promise.race([exit, new Promise((resolve) => setTimeout(resolve, 100))]);
      }
      const where = `${block.page}:${block.line}\n${output}`;
      expect(await exit, where).toBe(0);
      expect(output, where).not.toMatch(/"error"\s*:/);
      expect(output, where).toMatch(PRINTS[block.page]!);
    }
  }, 120_000);
});
