// The Claude Agent SDK: every tool call the SDK asks its host about (its
// `canUseTool` callback) becomes a Tollgate approval, decided by a person in the
// console, and the callback answers with the decision:
//
// - approve: allow, with the input as proposed;
// - edit: allow, with the operator's arguments as `updatedInput`;
// - reject: deny, with the operator's message, which the model reads as the
//   tool's result. A free-text answer to a tool call is not offered: the SDK
//   has no such decision, and a rejection's message already carries one;
// - no decision in time: deny, unless the gate approves on timeout;
//   canceled (the request or its task ended): deny and interrupt the turn.
//
// Claude's own questions (its AskUserQuestion tool) are asked as questions, one
// approval per question, and answered with the operators' answers in
// `updatedInput.answers`, where the SDK expects its user's answers.
//
// Each call is one approval under its `toolUseID`, so the same call asked again
// (a retry, another process) finds the approval it already has. The callback
// waits in this process until the decision arrives or the SDK aborts the call.
// Only types come from the SDK: this module loads without it.
import type { CanUseTool, PermissionResult, SDKMessage, SDKResultMessage } from "@anthropic-ai/claude-agent-sdk";
import type { ApprovalResult, DecisionAction, Json } from "../contract.ts";
import { clip, REASON_CHARS, SUMMARY_CHARS } from "./text.ts";
import type { Tollgate } from "../index.ts";

export interface ClaudeAgentApprovalOptions {
  tollgate: Tollgate;
  /** The Tollgate request the calls are asked on (runWithApprovals begins one per run). */
  requestId: string;
  /** Markdown shown to the operator on every approval (else what the SDK says about the call, when it says something). */
  summary?: string;
  /** How long a person has to decide before the gate's timeout decision applies. */
  timeoutMs?: number;
  /** What a timeout decides ("approve" only where an admin's policy allows it). */
  onTimeout?: "reject" | "cancel" | "approve";
}

export interface ClaudeAgentRunOptions extends Omit<ClaudeAgentApprovalOptions, "requestId"> {
  sessionId: string;
  /** The agent's name in the console. */
  agent: string;
  /** The caller's request, when this agent runs for another agent. */
  parentRequestId?: string;
  kind?: "agent" | "orchestrator";
  /** Sees every message of the run as it arrives. */
  onMessage?: (message: SDKMessage) => void;
}

export interface ClaudeAgentRunResult {
  /** The SDK's result message, which ended the run. */
  result: SDKResultMessage;
  requestId: string;
  /** Approvals asked during the run. */
  approvals: number;
}

type CallDetails = Parameters<CanUseTool>[2];

interface Ask {
  tool: string;
  args: Json;
  externalId: string;
  allow?: DecisionAction[];
  kind?: "question";
  summary?: string;
  reason?: string;
  batch?: string;
}

/** One question of AskUserQuestion's input, as the SDK's tool declares it. */
interface Question {
  question: string;
  header?: string;
  options?: { label: string; description?: string }[];
  multiSelect?: boolean;
}

const ASK_USER_QUESTION = "AskUserQuestion";
// What the SDK can do with a decision: allow (as proposed or with new input) or deny.
const TOOL_DECISIONS: DecisionAction[] = ["approve", "edit", "reject"];

/**
 * A `canUseTool` for `query()` that asks Tollgate about every call the SDK
 * would ask its user about. Pass `permissionMode: "default"`: in other modes
 * the SDK decides some calls itself without asking.
 */
export function tollgateCanUseTool(options: ClaudeAgentApprovalOptions): CanUseTool {
  return permissionCallback(options, () => undefined);
}

/**
 * Runs one `query()` as one Tollgate request (framework "claude-agent") with
 * `tollgateCanUseTool` as its permission callback. `start` receives the
 * callback and returns the query. The request completes with the result's
 * text when the run succeeds, and fails when the run ends in an error or
 * throws, which also ends any approval still pending on it.
 */
export async function runWithApprovals(
  start: (canUseTool: CanUseTool) => AsyncIterable<SDKMessage>,
  options: ClaudeAgentRunOptions,
): Promise<ClaudeAgentRunResult> {
  const { tollgate } = options;
  const request = await tollgate.begin({
    sessionId: options.sessionId,
    agent: options.agent,
    kind: options.kind,
    parentRequestId: options.parentRequestId,
    framework: "claude-agent",
  });
  let asked = 0;
  const canUseTool = permissionCallback({ ...options, requestId: request.requestId }, () => (asked += 1));
  try {
    let result: SDKResultMessage | undefined;
    for await (const message of start(canUseTool)) {
      options.onMessage?.(message);
      if (message.type === "result") result = message;
    }
    if (!result) throw new Error("the Claude Agent SDK's run ended without a result message");
    if (result.subtype === "success" && !result.is_error) {
      await request.complete({ result: result.result, claudeSessionId: result.session_id });
    } else {
      const message = "errors" in result && result.errors.length > 0 ? result.errors.join("; ") : `the run ended with ${result.subtype}`;
      await request.fail({ message, code: `CLAUDE_AGENT_${result.subtype.toUpperCase()}` });
    }
    return { result, requestId: request.requestId, approvals: asked };
  } catch (error) {
    await request.fail({ message: error instanceof Error ? error.message : String(error), code: "CLAUDE_AGENT_ERROR" }).catch(() => undefined);
    throw error;
  }
}

function permissionCallback(options: ClaudeAgentApprovalOptions, onAsked: () => void): CanUseTool {
  return async (toolName, input, call) => {
    call.signal.throwIfAborted();
    const ask = (what: Ask) => {
      onAsked();
      return askAndWait(options, what, call.signal);
    };
    if (toolName === ASK_USER_QUESTION && Array.isArray(input.questions)) {
      const questions = input.questions as Question[];
      const results = await Promise.all(questions.map((question, index) => ask(questionAsk(question, index, questions.length, call))));
      return answersFor(questions, results, input);
    }
    const result = await ask({
      tool: toolName,
      args: input as Json,
      externalId: call.toolUseID,
      allow: TOOL_DECISIONS,
      summary: options.summary ?? promptOf(toolName, call),
      reason: call.decisionReason,
    });
    return permissionFor(result, input);
  };
}

/**
 * Asks for the approval and waits for its decision. An abort ends the wait at
 * once with the signal's reason; the approval itself stays pending until
 * someone decides it or its request ends (runWithApprovals fails the request
 * of a run that stopped), and the SDK's wait for it ends with it.
 */
async function askAndWait(options: ClaudeAgentApprovalOptions, ask: Ask, signal: AbortSignal): Promise<ApprovalResult> {
  const { tollgate } = options;
  const asked = tollgate.ask({
    requestId: options.requestId,
    tool: ask.tool,
    args: ask.args,
    externalId: ask.externalId,
    ...(ask.allow ? { allow: ask.allow } : {}),
    ...(ask.kind ? { kind: ask.kind } : {}),
    ...(ask.summary ? { summary: clip(ask.summary, SUMMARY_CHARS) } : {}),
    ...(ask.reason ? { reason: clip(ask.reason, REASON_CHARS) } : {}),
    ...(ask.batch ? { batch: ask.batch } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    // A question has no rule that could let a timeout approve it: that outcome is for tool calls.
    ...(options.onTimeout && !(ask.kind === "question" && options.onTimeout === "approve") ? { onTimeout: options.onTimeout } : {}),
  });
  return untilAborted(asked, signal);
}

function untilAborted<T>(wait: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    wait.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** What the SDK says about the call: its prompt sentence ("Claude wants to ..."), else the action and its subject ("Write: NOTES.md"). */
function promptOf(toolName: string, call: CallDetails): string | undefined {
  if (call.title) return call.title;
  return call.description ? `${call.displayName ?? toolName}: ${call.description}` : undefined;
}

// ---- Decisions as the SDK's answers ---------------------------------------------

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

const mayRun = (result: ApprovalResult) => result.status === "APPROVED" || (result.status === "EXPIRED" && result.decision?.action === "approve");

/** A canceled approval's request or task has ended: the turn should stop, not try something else. */
function canceled(result: ApprovalResult): PermissionResult {
  const why = result.decision?.message;
  return { behavior: "deny", message: `The approval was canceled${why ? ` (${why})` : ""}; stop here.`, interrupt: true };
}

function permissionFor(result: ApprovalResult, input: Record<string, unknown>): PermissionResult {
  const { decision } = result;
  if (mayRun(result)) {
    if (decision?.action !== "edit") return { behavior: "allow", updatedInput: input };
    if (isObject(decision.args)) return { behavior: "allow", updatedInput: decision.args };
    return { behavior: "deny", message: "The operator's edit did not give the tool's arguments as an object; the call did not run." };
  }
  if (result.status === "CANCELED") return canceled(result);
  // A timeout's own message is about Tollgate's configuration, not for the model.
  if (result.status === "EXPIRED") return { behavior: "deny", message: "No one decided in time; the call did not run." };
  return { behavior: "deny", message: decision?.message || "An operator rejected this call." };
}

// ---- Claude's questions ----------------------------------------------------------

function questionAsk(question: Question, index: number, count: number, call: CallDetails): Ask {
  const options = (question.options ?? []).map((option) => `- **${option.label}**${option.description ? `: ${option.description}` : ""}`);
  const summary = [
    question.header ? `**${question.header}**: ${question.question}` : question.question,
    ...(options.length > 0 ? [`${question.multiSelect ? "Choose any of" : "Choose one of"} these, or answer in your own words:\n\n${options.join("\n")}`] : []),
  ].join("\n\n");
  return {
    tool: ASK_USER_QUESTION,
    args: question as unknown as Json,
    kind: "question",
    summary,
    // One approval per question; the questions of one call are shown together.
    externalId: count === 1 ? call.toolUseID : `${call.toolUseID}:${index}`,
    ...(count > 1 ? { batch: `claude-agent:${call.toolUseID}` } : {}),
  };
}

/** The operators' answers, by question text, where the SDK's AskUserQuestion reads its user's answers. */
function answersFor(questions: Question[], results: ApprovalResult[], input: Record<string, unknown>): PermissionResult {
  const ended = results.find((result) => result.status === "CANCELED");
  if (ended) return canceled(ended);
  const answered = results.map((result) => (result.decision?.action === "respond" ? (result.decision.message ?? "") : null));
  if (answered.every((answer) => answer === null)) return { behavior: "deny", message: `The operator ${unanswered(results[0]!)}.` };
  const answers = Object.fromEntries(questions.map((question, index) => [question.question, answered[index] ?? `(${unanswered(results[index]!)})`]));
  return { behavior: "allow", updatedInput: { ...input, answers } };
}

function unanswered(result: ApprovalResult): string {
  // A timeout's own message is about Tollgate's configuration, not for the model.
  if (result.status === "EXPIRED") return "did not answer in time";
  const why = result.decision?.message;
  return `declined to answer${why ? `: ${why}` : ""}`;
}
