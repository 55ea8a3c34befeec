// The README's TypeScript example is examples/gate-a-tool.ts, word for word,
// and it runs: against a real server, in its own process, it waits for the
// operator's decision and prints the outcome.
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { AGENT_KEY } from "./harness.ts";
import type { OperatorClient } from "./clients.ts";
import { useTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let operator: OperatorClient;
useTestServer((server, client) => {
  test = server;
  operator = client;
});

describe("README", () => {
  it("readme: the TypeScript example is examples/gate-a-tool.ts as printed", async () => {
    const readme = await readFile("README.md", "utf8");
    const block = /```ts runnable\n(import \{ createTollgate \}[\s\S]*?)```/.exec(readme)?.[1];
    const file = await readFile("examples/gate-a-tool.ts", "utf8");
    expect(block).toBe(file.replace(/^(\/\/.*\n)+/, ""));
  });

  it("readme: the example runs, waits for a person and prints what happened", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "examples/gate-a-tool.ts"], {
      env: { ...process.env, TOLLGATE_URL: test.url, TOLLGATE_AGENT_KEY: AGENT_KEY },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    let approvalId: string | undefined;
    for (let tries = 0; !approvalId && tries < 400; tries++) {
      const { items } = await operator.approval.list.query({ status: "PENDING", tool: "send_email", limit: 10 });
      approvalId = items[0]?.approvalId;
      if (!approvalId) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(approvalId, `no approval appeared; the example printed: ${output}`).toBeDefined();
    await operator.approval.decide.mutate({ approvalId: approvalId!, action: "approve" });
    expect(await exited, output).toBe(0);
    expect(output.trim()).toBe("executed");
    expect(await operator.approval.get.query({ approvalId: approvalId! })).toMatchObject({ status: "APPROVED", executedArgs: { to: "a@example.com" } });
  }, 30_000);
});
