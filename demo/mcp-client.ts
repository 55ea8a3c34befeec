// The demo's MCP client: an unmodified MCP client (the MCP SDK's own) whose
// server is `tollgate-mcp ... -- <the demo's notes server>`, as a user would
// configure Claude Desktop or Cursor. It calls one of the server's tools at a
// time; each call waits in Tollgate's inbox (agent "notes") for a decision.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";

const tollgateUrl = process.env.TOLLGATE_URL ?? "http://127.0.0.1:3000";
const tsx = ["--import", "tsx"];
const client = new Client({ name: "demo-mcp-client", version: "1.0.0" });
await client.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: [...tsx, "sdk/src/gateway/cli.ts", "--url", tollgateUrl, "--session-title", "MCP: the demo's notes server", "--", process.execPath, ...tsx, "demo/mcp-notes-server.ts"],
    env: process.env as Record<string, string>,
    stderr: "inherit",
  }),
  // The gateway and its upstream start under tsx: slow on a busy machine.
  { timeout: 300_000 },
);
console.log(`tools: ${(await client.listTools(undefined, { timeout: 300_000 })).tools.map((tool) => tool.name).join(", ")}`);

const calls = [
  { name: "read_note", arguments: { title: "welcome" } },
  { name: "write_note", arguments: { title: "groceries", text: "milk, bread" } },
  { name: "delete_note", arguments: { title: "welcome" } },
];
for (let turn = 0; ; turn++) {
  const call = calls[turn % calls.length]!;
  console.log(`calling ${call.name} ${JSON.stringify(call.arguments)}: decide it in the inbox`);
  // A person takes longer than MCP's 60-second default: the gateway's progress keeps this request alive.
  try {
    const result = (await client.callTool(call, CallToolResultSchema, { timeout: 60_000, resetTimeoutOnProgress: true, maxTotalTimeout: 3_600_000, onprogress: () => undefined })) as CallToolResult;
    const text = result.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join(" ");
    console.log(`${call.name} ${result.isError ? "was refused" : "answered"}: ${text}`);
  } catch (error) {
    // A client giving up on one call (its timeout) cancels that approval; the next call goes on.
    console.log(`${call.name} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  await new Promise((resolve) => setTimeout(resolve, 10_000));
}
