// A scripted stand-in for the Anthropic Messages API (POST /v1/messages, streamed
// as server-sent events when asked), so the Claude Agent SDK's own Claude Code
// process runs offline in tests: no model, no key, no network.
import http from "node:http";
import type { AddressInfo } from "node:net";

export type ModelTurn = { toolUse: { id: string; name: string; input: Record<string, unknown> } } | { text: string };

export interface ToolResult {
  tool_use_id: string;
  content: unknown;
  is_error?: boolean;
}

/**
 * Answers POST /v1/messages as the Anthropic API does (streamed as server-sent
 * events when asked to): the model's n-th turn is `script[n]`, n being the
 * number of tool results the conversation already holds. With `freshIds`, each
 * tool call it generates gets an id of its own (`<id>_<k>`), as a real model's
 * do: a call generated again is not the call it was before.
 */
export async function startMessagesApi(script: ModelTurn[], { freshIds = false } = {}) {
  const toolResults = new Map<string, ToolResult>();
  // Every call the model got, in order: the tool results its conversation held by then.
  const calls: { toolResults: string[] }[] = [];
  let generated = 0;
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    if (req.method !== "POST" || !req.url?.startsWith("/v1/messages")) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: `${req.method} ${req.url}` } }));
      return;
    }
    const request = JSON.parse(body) as { model: string; stream?: boolean; messages: { content: unknown }[] };
    const results = request.messages.flatMap((message) => (Array.isArray(message.content) ? message.content : [])).filter((block) => block?.type === "tool_result") as ToolResult[];
    for (const result of results) toolResults.set(result.tool_use_id, result);
    calls.push({ toolResults: results.map((result) => result.tool_use_id) });
    const turn = script[results.length] ?? { text: "Done." };
    const content = "toolUse" in turn ? [{ type: "tool_use", ...turn.toolUse, ...(freshIds ? { id: `${turn.toolUse.id}_${++generated}` } : {}) }] : [{ type: "text", text: turn.text }];
    const stopReason = "toolUse" in turn ? "tool_use" : "end_turn";
    const message = { id: `msg_${results.length}`, type: "message", role: "assistant", model: request.model, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } };
    if (!request.stream) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ...message, content, stop_reason: stopReason }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const send = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    send("message_start", { message: { ...message, content: [], stop_reason: null } });
    const [block] = content as { type: string; id?: string; name?: string; input?: unknown; text?: string }[];
    if (block!.type === "tool_use") {
      send("content_block_start", { index: 0, content_block: { type: "tool_use", id: block!.id, name: block!.name, input: {} } });
      send("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(block!.input) } });
    } else {
      send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
      send("content_block_delta", { index: 0, delta: { type: "text_delta", text: block!.text } });
    }
    send("content_block_stop", { index: 0 });
    send("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } });
    send("message_stop", {});
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    toolResults,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
