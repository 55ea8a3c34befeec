// A `tools/call` through the gateway: asked of Tollgate as an approval (a rule
// or a person decides), and forwarded to the upstream server only when it may
// run, at most once, with the arguments that were approved. Anything that
// keeps the gateway from asking fails closed: the client gets a tool result
// with isError saying why, and the upstream is not called.
import { createHash, randomUUID } from "node:crypto";
import canonicalize from "canonicalize";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ApprovalResult, Decision, Json } from "../contract.ts";
import type { Tollgate } from "../index.ts";
import type { Run } from "./run.ts";
import { annotationsOf, definitionOf, resultText, summaryOf } from "./tool-text.ts";

export interface ToolCallGateOptions {
  tollgate: Tollgate;
  /** The run the calls belong to, opened at the first call (Tollgate may be down when the gateway starts). */
  run: () => Promise<Run>;
  /** The agent name the approvals carry: the MCP server as policies match it. */
  agent: string;
  /** Keep the upstream's result on the approval as bounded text (--no-results turns it off). */
  keepResults: boolean;
  /** How often a client that gave a progress token hears that the call still waits. */
  progressIntervalMs: number;
  log: (line: string) => void;
}

/** What the gate needs of the MCP request it handles (the MCP SDK's RequestHandlerExtra, in part). */
export interface CallContext {
  signal: AbortSignal;
  progressToken?: string | number;
  sendProgress(progress: number, message: string): Promise<void>;
}

export type CallUpstream = (args: Record<string, unknown>) => Promise<CallToolResult>;

const failure = (text: string): CallToolResult => ({ content: [{ type: "text", text }], isError: true });
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The client went away or canceled the call while it waited. */
class Abandoned extends Error {}

export function toolCallGate(options: ToolCallGateOptions) {
  const { tollgate } = options;
  // This process's claims: a gateway started again claims under a new key, so
  // a claim the dead one took and never reported is not taken for this one's.
  const claimPrefix = `mcp-gateway:${randomUUID()}`;
  // How many calls of each (tool, arguments) this process has asked: the n-th
  // is the same call in a run taken over, so it finds the approval made for it.
  const asked = new Map<string, number>();

  /** The call's own request under the run's root; in a run taken over, the first one of this call not yet ended. */
  async function beginCall(run: Run, name: string, args: Record<string, unknown>) {
    const fingerprint = sha256(canonicalize({ tool: name, args }) ?? "");
    for (;;) {
      const nth = (asked.get(fingerprint) ?? 0) + 1;
      asked.set(fingerprint, nth);
      const begun = await tollgate.call("request.begin", {
        sessionId: run.sessionId,
        agent: options.agent,
        parentRequestId: run.rootRequestId,
        framework: "mcp",
        input: { tool: name, arguments: args as Json },
        // Under the run's root request: a continued run finds its calls, a follow-on request of the run asks afresh.
        idempotencyKey: `mcp-call:${run.rootRequestId}:${fingerprint}:${nth}`,
      });
      if (!run.resumed) return { requestId: begun.requestId, fingerprint };
      const found = await tollgate.call("request.load", { requestId: begun.requestId });
      if (found.status === "RUNNING" || found.status === "PAUSED") return { requestId: begun.requestId, fingerprint };
    }
  }

  /** Tells the client the call still waits, when it asked to hear (a progress token), which resets its request timeout. */
  function heartbeat(context: CallContext, approvalId: () => string | null) {
    if (context.progressToken === undefined) return () => undefined;
    let beats = 0;
    const timer = setInterval(() => {
      beats += 1;
      const id = approvalId();
      void context.sendProgress(beats, `waiting for a decision in Tollgate${id ? ` (approval ${id})` : ""}`).catch(() => undefined);
    }, options.progressIntervalMs);
    return () => clearInterval(timer);
  }

  function untilAbandoned(signal: AbortSignal): Promise<never> {
    return new Promise((_, reject) => {
      if (signal.aborted) reject(new Abandoned());
      signal.addEventListener("abort", () => reject(new Abandoned()), { once: true });
    });
  }

  async function execute(approval: ApprovalResult, decision: Decision, proposed: Record<string, unknown>, callUpstream: CallUpstream): Promise<CallToolResult> {
    const approvalId = approval.approvalId;
    const args = decision.action === "edit" ? decision.args : proposed;
    if (typeof args !== "object" || args === null || Array.isArray(args)) {
      return failure(`Tollgate: the arguments approved in approval ${approvalId} are not an object, so the tool was not run.`);
    }
    const claim = await tollgate.call("approval.claimExecution", { approvalId, claimKey: `${claimPrefix}:${approvalId}` });
    if (!claim.granted) {
      if (claim.execution) return ranBefore(approvalId, claim.execution.result);
      return failure(
        `Tollgate: approval ${approvalId} was claimed at ${claim.claimedAt} by a gateway that stopped before it reported what ran; the tool is not run again, in case it ran.`,
      );
    }
    let result: CallToolResult;
    try {
      result = await callUpstream(args as Record<string, unknown>);
    } catch (error) {
      // A protocol failure of the upstream is still what ran: reported, and told to the client as a failed tool.
      result = failure(`The MCP server failed to run the tool: ${errorText(error)}`);
    }
    const kept = options.keepResults ? { text: resultText(result), isError: result.isError === true } : undefined;
    await tollgate
      .call("approval.reportExecution", { approvalId, executedArgs: args as Json, result: kept, claimKey: `${claimPrefix}:${approvalId}` })
      // The tool ran: its result goes to the client whether or not the report did.
      .catch((error) => options.log(`tollgate-mcp: approval ${approvalId} ran, but reporting what ran failed: ${errorText(error)}`));
    return result;
  }

  /** A call that ran before (under an earlier gateway of the run): its kept result, not a second run. */
  function ranBefore(approvalId: string, result: unknown): CallToolResult {
    const kept = result as { text?: unknown; isError?: unknown } | null | undefined;
    const text = typeof kept?.text === "string" ? kept.text : `Tollgate: approval ${approvalId} already ran; its result was not kept.`;
    return { content: [{ type: "text", text }], isError: kept?.isError === true };
  }

  function answerFor(approval: ApprovalResult): CallToolResult | null {
    const { decision, approvalId } = approval;
    if (approval.status === "CANCELED" || !decision) {
      return failure(`Tollgate: approval ${approvalId} was canceled${approval.decision?.message ? `: ${approval.decision.message}` : ""}; the tool was not run.`);
    }
    const mayRun = approval.status === "APPROVED" || (approval.status === "EXPIRED" && decision.action === "approve");
    if (mayRun) return null;
    if (decision.action === "respond") return { content: [{ type: "text", text: decision.message ?? "" }] };
    const said = decision.message ? `: ${decision.message}` : ".";
    if (approval.status === "EXPIRED") return failure(`Tollgate: nobody decided in time, so the call was not run (approval ${approvalId})${said}`);
    return failure(`Tollgate: ${decision.decidedBy} rejected this call (approval ${approvalId})${said}`);
  }

  return async function gateToolCall(name: string, args: Record<string, unknown>, tool: Tool | undefined, context: CallContext, callUpstream: CallUpstream): Promise<CallToolResult> {
    let run: Run;
    try {
      run = await options.run();
    } catch (error) {
      return failure(`Tollgate could not be asked, so the tool was not run: ${errorText(error)}`);
    }
    let requestId: string | null = null;
    let approvalId: string | null = null;
    let ending: { kind: "complete" } | { kind: "fail"; message: string } = { kind: "complete" };
    const stopBeating = heartbeat(context, () => approvalId);
    const abandoned = untilAbandoned(context.signal);
    abandoned.catch(() => undefined);
    try {
      const call = await Promise.race([beginCall(run, name, args), abandoned]);
      requestId = call.requestId;
      const decided = await Promise.race([
        tollgate.ask({
          requestId,
          tool: name,
          args: args as Json,
          summary: summaryOf(options.agent, name, tool),
          annotations: annotationsOf(tool),
          toolDefinition: definitionOf(tool),
          externalId: `mcp:${call.fingerprint}`,
          idempotencyKey: `mcp-ask:${requestId}`,
        }),
        abandoned,
      ]);
      approvalId = decided.approvalId;
      stopBeating();
      if (decided.execution) return ranBefore(decided.approvalId, decided.execution.result);
      const answer = answerFor(decided);
      if (answer) return answer;
      return await execute(decided, decided.decision!, args, callUpstream);
    } catch (error) {
      if (error instanceof Abandoned) {
        // Failing the call's request cancels its pending approval: nobody waits for the decision.
        ending = { kind: "fail", message: "the MCP client canceled the call or went away" };
        return failure("Tollgate: the call was canceled by the client.");
      }
      ending = { kind: "fail", message: `Tollgate refused or could not be reached: ${errorText(error)}` };
      return failure(`Tollgate refused the call or could not be reached, so the tool was not run: ${errorText(error)}`);
    } finally {
      stopBeating();
      if (requestId) await endCall(requestId, ending);
    }
  };

  async function endCall(requestId: string, ending: { kind: "complete" } | { kind: "fail"; message: string }) {
    try {
      if (ending.kind === "complete") await tollgate.call("request.complete", { requestId });
      else await tollgate.call("request.fail", { requestId, error: { message: ending.message, code: "mcp_call_abandoned" } });
    } catch (error) {
      options.log(`tollgate-mcp: could not end request ${requestId}: ${errorText(error)}`);
    }
  }
}
