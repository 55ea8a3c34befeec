// What the operator reads about an MCP tool call, and what is kept of what
// the tool answered. Everything here comes from the upstream server, which the
// gateway does not trust: hints are shown as the server's claims, with MCP's
// defaults where it says nothing, and the text is bounded.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { clip, SUMMARY_CHARS } from "../adapters/text.ts";
import type { Json, ToolAnnotations } from "../contract.ts";

const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const;
/** What MCP says a client must assume when the server gives no hint. */
export const MCP_HINT_DEFAULTS = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true } as const;
const TITLE_CHARS = 200;
/** How much of a tool's result is kept on its approval. */
export const RESULT_CHARS = 8_000;

/** The annotations MCP defines, as approval.request takes them: only well-typed values pass. */
export function annotationsOf(tool: Tool | undefined): ToolAnnotations | undefined {
  const given = tool?.annotations as Record<string, unknown> | undefined;
  if (!given || typeof given !== "object") return undefined;
  const kept: ToolAnnotations = {};
  if (typeof given.title === "string" && given.title.length > 0) kept.title = clip(given.title, TITLE_CHARS);
  for (const hint of HINTS) if (typeof given[hint] === "boolean") kept[hint] = given[hint] as boolean;
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/** The tool as the server lists it now, the parts an admin's pin covers: the pin matches only while these are unchanged. */
export function definitionOf(tool: Tool | undefined) {
  if (!tool) return undefined;
  const annotations = annotationsOf(tool);
  return {
    name: tool.name,
    ...(tool.description !== undefined && { description: tool.description }),
    ...(annotations && { annotations }),
    inputSchema: tool.inputSchema as { [key: string]: Json },
  };
}

const yesNo = (value: boolean) => (value ? "yes" : "no");

/** Markdown shown first on the approval: which server, which tool, what it says of itself. */
export function summaryOf(server: string, toolName: string, tool: Tool | undefined): string {
  const annotations = annotationsOf(tool) ?? {};
  const lines = [`MCP server **${server}** asks to run \`${toolName}\`${annotations.title ? ` (${annotations.title})` : ""}.`];
  if (tool?.description) lines.push("", ...tool.description.split("\n").map((line) => `> ${line}`));
  if (!tool) lines.push("", "The server did not list this tool.");
  const hints = HINTS.map((hint) => {
    const given = annotations[hint];
    const name = hint.replace(/Hint$/, "").replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
    return given === undefined ? `${name}: ${yesNo(MCP_HINT_DEFAULTS[hint])} (not said; MCP's default)` : `${name}: ${yesNo(given)}`;
  });
  lines.push("", `The server's hints (not verified): ${hints.join(", ")}.`);
  return clip(lines.join("\n"), SUMMARY_CHARS);
}

/** The result as bounded text: text parts as they are, binary parts named, never their bytes. */
export function resultText(result: CallToolResult): string {
  const parts = (result.content ?? []).map((part) => {
    switch (part.type) {
      case "text":
        return part.text;
      case "image":
      case "audio":
        return `[${part.type} ${part.mimeType}, not kept]`;
      case "resource":
        return "text" in part.resource && typeof part.resource.text === "string" ? part.resource.text : `[resource ${part.resource.uri}, not kept]`;
      case "resource_link":
        return `[link ${part.uri}]`;
      default:
        return "[content not kept]";
    }
  });
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  return clip(parts.join("\n"), RESULT_CHARS);
}
