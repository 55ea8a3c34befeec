// A Claude Agent SDK run as its own process (`node --import tsx`) for the
// durable-run tests: one durable run (RUN_ID) of a refund agent whose model is
// the scripted stand-in at ANTHROPIC_BASE_URL. Each process has a home of its
// own, as another machine would: the transcript is shared only through a
// sessionStore on files under SESSIONS. Each run of the refund tool is a line
// in TOOL_LOG, so a test counts what ran across processes.
// TOOL_BLOCKS=1: the tool records its run, then never returns (to die inside it).
// CANCEL_AFTER_MS: the approval is canceled when no one decides within that time.
import { appendFile, mkdir, mkdtemp, readFile } from "node:fs/promises";
import path from "node:path";
import { createSdkMcpServer, query, tool, type SessionKey, type SessionStore, type SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";
import { runWithApprovals } from "../sdk/src/adapters/claude-agent.ts";
import { createTollgate } from "../sdk/src/index.ts";

const env = process.env as Record<string, string>;
const tollgate = createTollgate({ url: env.TOLLGATE_URL!, apiKey: env.TOLLGATE_AGENT_KEY!, pollMs: 10_000 });

/** Transcripts as JSON lines, one file a session: what a shared store (a bucket, a database) is to machines. */
function fileSessionStore(dir: string): SessionStore {
  const file = (key: SessionKey) => path.join(dir, encodeURIComponent(key.projectKey), `${key.sessionId}${key.subpath ? `.${encodeURIComponent(key.subpath)}` : ""}.jsonl`);
  return {
    async append(key, entries) {
      await mkdir(path.dirname(file(key)), { recursive: true });
      await appendFile(file(key), entries.map((entry) => `${JSON.stringify(entry)}\n`).join(""));
    },
    async load(key) {
      const text = await readFile(file(key), "utf8").catch(() => null);
      return text === null ? null : text.split("\n").filter(Boolean).map((line) => JSON.parse(line) as SessionStoreEntry);
    },
  };
}

const shop = createSdkMcpServer({
  name: "shop",
  alwaysLoad: true,
  tools: [
    tool("refund", "Refunds an order", { order: z.string(), amount: z.number() }, async (args) => {
      await appendFile(env.TOOL_LOG!, `${JSON.stringify({ args, pid: process.pid })}\n`);
      if (env.TOOL_BLOCKS === "1") await new Promise(() => undefined);
      return { content: [{ type: "text", text: `refunded ${args.amount} on order ${args.order}` }] };
    }),
  ],
});

// Tells the test when this process has begun (or continued) its run.
const beginRun = tollgate.beginRun;
tollgate.beginRun = async (input) => {
  const run = await beginRun(input);
  console.log(`begun ${run.continued ? "continued" : "new"}`);
  return run;
};

const home = await mkdtemp(path.join(path.dirname(env.TOOL_LOG!), "claude-home-"));
// The app's folder, the same on every machine: the store keys transcripts by it.
const cwd = path.join(path.dirname(env.TOOL_LOG!), "app");
await mkdir(cwd, { recursive: true });
try {
  const { result } = await runWithApprovals(
    (canUseTool, continuation) =>
      query({
        prompt: continuation.resuming ? "Continue." : "Please refund order 1001",
        options: {
          ...continuation.options,
          canUseTool,
          cwd,
          permissionMode: "default",
          settingSources: [],
          mcpServers: { shop },
          sessionStore: fileSessionStore(env.SESSIONS!),
          env: {
            PATH: env.PATH ?? "",
            HOME: home,
            CLAUDE_CONFIG_DIR: path.join(home, ".claude"),
            CLAUDE_CODE_TMPDIR: home,
            ANTHROPIC_BASE_URL: env.ANTHROPIC_BASE_URL!,
            ANTHROPIC_API_KEY: "sk-ant-offline-test",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          },
        },
      }),
    {
      tollgate,
      sessionId: env.SESSION_ID!,
      agent: "claude-refunds",
      runId: env.RUN_ID!,
      ...(env.CANCEL_AFTER_MS ? { timeoutMs: Number(env.CANCEL_AFTER_MS), onTimeout: "cancel" as const } : {}),
    },
  );
  console.log(`done ${result.subtype === "success" ? result.result : result.subtype}`);
  tollgate.close();
} catch (error) {
  console.log(`error ${(error as Error).name}: ${(error as Error).message}`);
  tollgate.close();
  process.exitCode = 3;
}
