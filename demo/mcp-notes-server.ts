// The demo's own MCP server: a notebook kept in memory, with a tool to read a
// note (read-only), one to write one and one to delete one (destructive). It
// knows nothing of Tollgate; the demo puts tollgate-mcp in front of it.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const notes = new Map<string, string>([["welcome", "Every tool call of this server is decided in Tollgate."]]);
const server = new McpServer({ name: "notes", version: "1.0.0" });

server.registerTool(
  "read_note",
  { description: "Reads a note by its title", inputSchema: { title: z.string() }, annotations: { title: "Read a note", readOnlyHint: true, openWorldHint: false } },
  async ({ title }) => ({ content: [{ type: "text", text: notes.get(title) ?? `no note "${title}"` }] }),
);
server.registerTool(
  "write_note",
  { description: "Writes a note, replacing one of the same title", inputSchema: { title: z.string(), text: z.string() }, annotations: { destructiveHint: false, openWorldHint: false } },
  async ({ title, text }) => {
    notes.set(title, text);
    return { content: [{ type: "text", text: `wrote "${title}"` }] };
  },
);
server.registerTool(
  "delete_note",
  { description: "Deletes a note", inputSchema: { title: z.string() }, annotations: { destructiveHint: true, openWorldHint: false } },
  async ({ title }) => ({ content: [{ type: "text", text: notes.delete(title) ? `deleted "${title}"` : `no note "${title}"` }] }),
);

await server.connect(new StdioServerTransport());
