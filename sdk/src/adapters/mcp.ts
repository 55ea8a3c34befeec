// MCP elicitation routed to a person: an MCP client's handler for
// `elicitation/create` that asks Tollgate a form approval (the server's
// requested schema as the form, its message as the summary) and answers the
// server with the operator's choice: accept with the values they filled in,
// decline, or cancel when nobody decided (the approval was canceled or expired).
//
// A person takes longer than MCP's 60-second request timeout. While waiting,
// the handler sends progress notifications on the request's progress token, so
// a server that elicits with `resetTimeoutOnProgress: true` (and an `onprogress`
// callback, which is what makes its SDK ask for progress) keeps waiting; a
// server that sends no progress token needs a `timeout` long enough for a person.
import { randomUUID } from "node:crypto";
import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import type { ApprovalResult, Json } from "../contract.ts";
import { clip, SUMMARY_CHARS } from "./text.ts";
import type { Tollgate } from "../index.ts";

export interface ElicitationOptions {
  tollgate: Tollgate;
  /** The Tollgate request of the agent using this MCP client (a function when it changes per call). */
  requestId: string | (() => string);
  /** The tool name the approval shows (default "elicitation"). */
  tool?: string;
  /** How often to tell the server the request is still alive (default 15 s). */
  heartbeatMs?: number;
}

/** What the handler gets besides the request (the relevant part of the MCP SDK's RequestHandlerExtra). */
export interface ElicitationExtra {
  signal: AbortSignal;
  requestId: string | number;
  sendNotification(notification: { method: "notifications/progress"; params: { progressToken: string | number; progress: number; message?: string } }): Promise<void>;
}

const DEFAULT_HEARTBEAT_MS = 15_000;

/**
 * The `elicitation/create` handler: `client.setRequestHandler(ElicitRequestSchema, tollgateElicitation({...}))`.
 * The client must declare the capability: `new Client(info, { capabilities: { elicitation: { form: {} } } })`.
 */
export function tollgateElicitation(options: ElicitationOptions) {
  // The framework id of each elicitation. MCP never sends a request twice, and
  // its request ids start again with every connection (a server's restart): a
  // prefix of this handler's own and its count of elicitations keep each one its
  // own approval; the MCP request id is kept in it for reading.
  const handler = randomUUID();
  let elicitations = 0;
  return async (request: ElicitRequest, extra: ElicitationExtra): Promise<ElicitResult> => {
    const params = request.params;
    // URL mode is for what must not pass through anyone else (credentials, payments): it stays with the user.
    if (params.mode === "url") return { action: "decline" };
    const requestId = typeof options.requestId === "function" ? options.requestId() : options.requestId;
    // ask: one call, the decision then pushed on the connection the SDK holds.
    const asked = options.tollgate.ask({
      requestId,
      tool: options.tool ?? "elicitation",
      args: {},
      kind: "form",
      form: params.requestedSchema as Record<string, Json>,
      summary: clip(params.message, SUMMARY_CHARS),
      externalId: `mcp:${handler}:${(elicitations += 1)}:${String(extra.requestId)}`,
    });
    const result = await keepingAlive(asked, request, extra, options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
    return result ? answerOf(result) : { action: "cancel" };
  };
}

/** Waits for the decision, sending progress meanwhile; null when the server gave up on the request. */
async function keepingAlive(decision: Promise<ApprovalResult>, request: ElicitRequest, extra: ElicitationExtra, heartbeatMs: number): Promise<ApprovalResult | null> {
  const progressToken = request.params._meta?.progressToken;
  let beats = 0;
  const heartbeat =
    progressToken === undefined
      ? null
      : setInterval(() => {
          beats += 1;
          void extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress: beats, message: "waiting for a person to answer in Tollgate" } }).catch(() => undefined);
        }, heartbeatMs);
  const aborted = new Promise<null>((resolve) => {
    if (extra.signal.aborted) resolve(null);
    extra.signal.addEventListener("abort", () => resolve(null), { once: true });
  });
  try {
    return await Promise.race([decision, aborted]);
  } finally {
    if (heartbeat) clearInterval(heartbeat);
  }
}

/** accept with the values filled in, decline on a rejection, cancel when nobody decided. */
function answerOf(result: ApprovalResult): ElicitResult {
  if (result.status === "APPROVED" && result.decision?.action === "edit") {
    return { action: "accept", content: result.decision.args as ElicitResult["content"] };
  }
  if (result.status === "REJECTED") return { action: "decline" };
  return { action: "cancel" };
}
