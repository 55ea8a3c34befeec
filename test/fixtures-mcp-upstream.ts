// A small MCP server for the gateway's tests, built with the MCP SDK as any
// server is: files tools with annotations, one that elicits, one that asks the
// client for its roots and a sampled message, and a log of
// every call it runs (one JSON line each, in UPSTREAM_LOG), so a test can see
// what reached it. With UPSTREAM_TASKS=1 it serves MCP tasks too, and adds
// `export_report`, a tool it runs only as a task. Over stdio, or over Streamable HTTP with UPSTREAM_HTTP=1
// (it prints its URL, and wants UPSTREAM_TOKEN as a bearer token).
import { appendFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

function ran(tool: string, args: unknown) {
  if (process.env.UPSTREAM_LOG) appendFileSync(process.env.UPSTREAM_LOG, `${JSON.stringify({ tool, args })}\n`);
}

function files(): McpServer {
  const withTasks = process.env.UPSTREAM_TASKS === "1";
  const server = new McpServer(
    { name: "files", version: "1.0.0" },
    withTasks
      ? { capabilities: { logging: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }, taskStore: new InMemoryTaskStore() }
      : { capabilities: { logging: {} } },
  );
  server.registerTool(
    "read_file",
    {
      description: process.env.UPSTREAM_READ_DESCRIPTION ?? "Reads a file",
      inputSchema: { path: z.string() },
      annotations: { title: "Read a file", readOnlyHint: true, openWorldHint: false },
    },
    async (args) => {
      ran("read_file", args);
      return { content: [{ type: "text", text: `contents of ${args.path}` }] };
    },
  );
  server.registerTool(
    "delete_file",
    { description: "Deletes a file", inputSchema: { path: z.string(), recursive: z.boolean().optional() }, annotations: { destructiveHint: true } },
    async (args) => {
      ran("delete_file", args);
      return { content: [{ type: "text", text: `deleted ${args.path}` }] };
    },
  );
  server.registerTool("confirm_with_user", { description: "Asks the user to confirm", inputSchema: { question: z.string() } }, async (args) => {
    ran("confirm_with_user", args);
    const answer = await server.server.elicitInput({
      mode: "form",
      message: args.question,
      requestedSchema: { type: "object", properties: { confirmed: { type: "boolean" } }, required: ["confirmed"] },
    });
    return { content: [{ type: "text", text: JSON.stringify(answer) }] };
  });
  server.registerTool("summarize_roots", { description: "Asks the client's model to summarize the client's roots" }, async () => {
    ran("summarize_roots", {});
    const { roots } = await server.server.listRoots();
    const sampled = await server.server.createMessage({
      messages: [{ role: "user", content: { type: "text", text: `Summarize: ${roots.map((root) => root.uri).join(", ")}` } }],
      maxTokens: 50,
    });
    return { content: [{ type: "text", text: sampled.content.type === "text" ? sampled.content.text : "" }] };
  });
  if (withTasks) {
    server.experimental.tasks.registerToolTask(
      "export_report",
      { description: "Exports a report, as a task", inputSchema: { name: z.string() }, annotations: { readOnlyHint: false }, execution: { taskSupport: "required" } },
      {
        createTask: async (args, extra) => {
          ran("export_report", args);
          const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 50 });
          await extra.taskStore.storeTaskResult(task.taskId, "completed", { content: [{ type: "text", text: `exported ${args.name}` }] });
          return { task };
        },
        getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
        getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
      },
    );
  }
  return server;
}

if (process.env.UPSTREAM_HTTP === "1") {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (request, response) => {
    if (request.headers.authorization !== `Bearer ${process.env.UPSTREAM_TOKEN}`) {
      response.writeHead(401).end("a bearer token is required");
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    const sessionId = request.headers["mcp-session-id"] as string | undefined;
    let transport = sessionId ? transports.get(sessionId) : undefined;
    if (!transport) {
      const opened = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void transports.set(id, opened) });
      await files().connect(opened);
      transport = opened;
    }
    await transport.handleRequest(request, response, body);
  });
  http.listen(0, "127.0.0.1", () => process.stdout.write(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp\n`));
} else {
  await files().connect(new StdioServerTransport());
}
