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
//   canceled (its timeout said so, or the request or its task ended): deny and
//   interrupt the turn; runWithApprovals then fails the request
//   (APPROVAL_CANCELED) and throws RunCanceledError.
//
// Claude's own questions (its AskUserQuestion tool) are asked as questions, one
// approval per question, and answered with the operators' answers in
// `updatedInput.answers`, where the SDK expects its user's answers.
//
// Each call is one approval under its `toolUseID`, so the same call asked again
// (a retry, another process) finds the approval it already has. The callback
// waits in this process until the decision arrives or the SDK aborts the call.
//
// A durable run (runWithApprovals with a `runId`) does not wait inside the SDK:
// a PreToolUse hook answers `defer`, which ends the query with the call as
// `deferred_tool_use`; the adapter keeps the Claude session id and the call in
// Tollgate (sealed), then asks and waits, and resumes the session
// (`options.resume`) with the decision, which the hook then gives. A process
// started again with the same runId resumes the same session on the same
// approval; with the SDK's `sessionStore`, on another machine too. A canceled
// deferred call ends the run there, without resuming the session.
// Only types come from the SDK: this module loads without it.
import { randomUUID } from "node:crypto";
import type { CanUseTool, HookCallback, HookCallbackMatcher, HookJSONOutput, PermissionResult, SDKMessage, SDKResultMessage } from "@anthropic-ai/claude-agent-sdk";
import type { ApprovalResult, DecisionAction, Json } from "../contract.ts";
import { RunCanceledError, RunDrivenElsewhereError } from "../durable-run.ts";
import { clip, REASON_CHARS, SUMMARY_CHARS } from "./text.ts";
import type { Tollgate } from "../index.ts";

// One error for every adapter's canceled run; each adapter's entry point offers it.
export { RunCanceledError };

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
  /**
   * The durable run's id (the app's conversation or job id): a process
   * started again with it resumes the run's Claude session on the call it
   * deferred, without asking again; once the run has ended, it begins a
   * follow-on request in the same task. Needs the SDK's session persistence
   * (a `sessionStore` for another machine) and `start` spreading
   * `continuation.options` into query()'s options.
   */
  runId?: string;
  /** A durable run's hook matcher (a pattern on the tool's name): the calls it asks about; default every call. */
  matcher?: string;
}

/** What `start` gets beside the callback: for a durable run, what to spread into query()'s options. */
export interface ClaudeAgentContinuation {
  /** The hooks (PreToolUse defers and answers calls, PostToolUse reports what ran), and `resume` (the run's Claude session) when this query continues the run; empty without a runId. */
  options: { hooks?: { PreToolUse: HookCallbackMatcher[]; PostToolUse: HookCallbackMatcher[] }; resume?: string };
  /**
   * True when this query resumes the run's session. The SDK resumes with a
   * prompt, which the model reads after the deferred call: give a short one
   * ("Continue."), not the run's first prompt again.
   */
  resuming: boolean;
}

export interface ClaudeAgentRunResult {
  /** The SDK's result message, which ended the run. */
  result: SDKResultMessage;
  requestId: string;
  /** Approvals asked during the run. */
  approvals: number;
}

/** What a run's permission callback tells it: each ask, and a canceled approval (the turn it interrupted ends the run). */
interface AskTracking {
  asked(): void;
  canceled(approvalId: string): void;
}

const untracked: AskTracking = { asked: () => undefined, canceled: () => undefined };

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
  return permissionCallback(options, untracked);
}

/**
 * Runs one `query()` as one Tollgate request (framework "claude-agent") with
 * `tollgateCanUseTool` as its permission callback. `start` receives the
 * callback and returns the query. The request completes with the result's
 * text when the run succeeds, and fails when the run ends in an error or
 * throws, which also ends any approval still pending on it. A canceled
 * approval stops the run: the request fails (APPROVAL_CANCELED), as in the
 * OpenAI Agents adapter, and this throws RunCanceledError.
 */
export async function runWithApprovals(
  start: (canUseTool: CanUseTool, continuation: ClaudeAgentContinuation) => AsyncIterable<SDKMessage>,
  options: ClaudeAgentRunOptions,
): Promise<ClaudeAgentRunResult> {
  if (options.runId) return runDurably(start, options, options.runId);
  const request = await options.tollgate.begin(beginInput(options));
  let asked = 0;
  let canceledApproval: string | undefined;
  const canUseTool = permissionCallback({ ...options, requestId: request.requestId }, { asked: () => (asked += 1), canceled: (approvalId) => (canceledApproval ??= approvalId) });
  try {
    const result = await resultOf(start(canUseTool, { options: {}, resuming: false }), options);
    if (canceledApproval) throw new RunCanceledError(canceledApproval);
    await end(request, result);
    return { result, requestId: request.requestId, approvals: asked };
  } catch (error) {
    const ended = stoppedBy(canceledApproval, error);
    await request.fail(failure(ended)).catch(() => undefined);
    throw ended;
  }
}

/** The error a run ends with: a canceled approval's interrupt is why the query stopped, whatever the SDK reported. */
function stoppedBy(canceledApproval: string | undefined, error: unknown): unknown {
  return canceledApproval && !(error instanceof RunCanceledError) ? new RunCanceledError(canceledApproval, { cause: error }) : error;
}

/** How the run's request fails; a request already ended (its task canceled) stays as it ended. */
function failure(error: unknown) {
  return { message: error instanceof Error ? error.message : String(error), code: error instanceof RunCanceledError ? "APPROVAL_CANCELED" : "CLAUDE_AGENT_ERROR" };
}

function beginInput(options: ClaudeAgentRunOptions) {
  return { sessionId: options.sessionId, agent: options.agent, kind: options.kind, parentRequestId: options.parentRequestId, framework: "claude-agent" };
}

/** Reads the query to its end; its last result message is the run's. */
async function resultOf(messages: AsyncIterable<SDKMessage>, options: ClaudeAgentRunOptions): Promise<SDKResultMessage> {
  let result: SDKResultMessage | undefined;
  for await (const message of messages) {
    options.onMessage?.(message);
    if (message.type === "result") result = message;
  }
  if (!result) throw new Error("the Claude Agent SDK's run ended without a result message");
  return result;
}

/** Completes the run's request with the result's text, or fails it with why the run ended. */
async function end(request: { complete(output?: unknown): Promise<unknown>; fail(error: { message: string; code?: string }): Promise<unknown> }, result: SDKResultMessage) {
  if (result.subtype === "success" && !result.is_error) {
    await request.complete({ result: result.result, claudeSessionId: result.session_id });
    return;
  }
  // A success with is_error (such as a deferred call the resumed session could not run) says why in its result.
  const why = result.subtype === "success" ? result.result : result.errors.join("; ");
  const reason = result.subtype === "success" ? (result.terminal_reason ?? "error") : result.subtype;
  await request.fail({ message: why || `the run ended with ${reason}`, code: `CLAUDE_AGENT_${reason.toUpperCase()}` });
}

type DurableRun = Awaited<ReturnType<Tollgate["beginRun"]>>;

/** What a durable run keeps in Tollgate (sealed) once a query has deferred a call: enough for any process to ask and resume. */
interface DurableState {
  claudeSessionId: string;
  deferred: { id: string; name: string; input: Record<string, unknown> };
}

/**
 * A durable run: each call the hook defers ends the query; the session and the
 * call are kept before the call is asked about, so a process that dies at any
 * point leaves either nothing asked or a kept call the next process asks about
 * again under the same toolUseID (the same approval).
 */
async function runDurably(
  start: (canUseTool: CanUseTool, continuation: ClaudeAgentContinuation) => AsyncIterable<SDKMessage>,
  options: ClaudeAgentRunOptions,
  runId: string,
): Promise<ClaudeAgentRunResult> {
  const run = await options.tollgate.beginRun({ runId, ...beginInput(options) });
  let asked = 0;
  let canceledApproval: string | undefined;
  const approvalOptions = { ...options, requestId: run.requestId };
  // Claude's questions are still asked through canUseTool, whose canceled answer interrupts the turn.
  const canUseTool = permissionCallback(approvalOptions, { asked: () => (asked += 1), canceled: (approvalId) => (canceledApproval ??= approvalId) });
  // What the hook answers for deferred calls this process has a decision for, by toolUseID.
  const answers = new Map<string, PermissionResult>();
  // The execution claims this process holds, by toolUseID: reported once the SDK has run the call.
  const claims = new Map<string, { approvalId: string; claimKey: string }>();
  let kept = run.continued && run.state ? (JSON.parse(run.state) as DurableState) : null;
  try {
    for (;;) {
      if (kept) {
        const { deferred } = kept;
        asked += 1;
        const result = await askAndWait(approvalOptions, toolAsk(deferred.name, deferred.input, deferred.id, options.summary), new AbortController().signal);
        // Not resumed to be denied: Claude Code takes a hook's stop on a resumed
        // deferred call for a hook error and calls the model again (0.3.331).
        if (result.status === "CANCELED") throw new RunCanceledError(result.approvalId);
        answers.set(deferred.id, await claimed(options.tollgate, run, result, deferred.input, deferred.id, claims));
      }
      const matcher = options.matcher ? { matcher: options.matcher } : {};
      const hooks = { PreToolUse: [{ ...matcher, hooks: [deferringHook(answers)] }], PostToolUse: [{ ...matcher, hooks: [reportingHook(options.tollgate, claims)] }] };
      const continuation = { options: { hooks, ...(kept ? { resume: kept.claudeSessionId } : {}) }, resuming: kept !== null };
      const result = await resultOf(start(canUseTool, continuation), options);
      if (result.subtype === "success" && result.terminal_reason === "tool_deferred" && result.deferred_tool_use) {
        kept = { claudeSessionId: result.session_id, deferred: result.deferred_tool_use };
        await run.save(JSON.stringify(kept));
        continue;
      }
      if (canceledApproval) throw new RunCanceledError(canceledApproval);
      await end(run, result);
      return { result, requestId: run.requestId, approvals: asked };
    }
  } catch (error) {
    run.stop();
    // Another process drives the run now: its request is not this process's to end.
    if (error instanceof RunDrivenElsewhereError) throw error;
    const ended = stoppedBy(canceledApproval, error);
    await run.fail(failure(ended)).catch(() => undefined);
    throw ended;
  }
}

/**
 * The answer for a decided call. An approved one is claimed first (its one
 * execution, in any process): a claim already taken was this run's earlier
 * driver's, which stopped, so the call is not run again and the model reads why.
 */
async function claimed(
  tollgate: Tollgate,
  run: DurableRun,
  result: ApprovalResult,
  input: Record<string, unknown>,
  toolUseID: string,
  claims: Map<string, { approvalId: string; claimKey: string }>,
): Promise<PermissionResult> {
  const permission = permissionFor(result, input);
  if (permission.behavior !== "allow") return permission;
  // Only the process that still drives the run runs its tools.
  await run.hold();
  const claimKey = `claude-agent:${randomUUID()}`;
  const claim = await tollgate.call("approval.claimExecution", { approvalId: result.approvalId, claimKey });
  if (claim.granted) {
    claims.set(toolUseID, { approvalId: result.approvalId, claimKey });
    return permission;
  }
  const why = claim.execution
    ? `approval ${result.approvalId} already ran this call (reported at ${claim.execution.at}); it runs at most once. What it returned: ${JSON.stringify(claim.execution.result ?? null)}`
    : `approval ${result.approvalId} was claimed at ${claim.claimedAt} by a process that stopped before it reported what ran: the call's outcome is unknown, and it is not run again`;
  return { behavior: "deny", message: why };
}

/**
 * A durable run's PreToolUse hook: a call this process has an answer for gets
 * it; any other is deferred (the query ends with it), so nothing waits inside
 * the SDK, where a hook's timeout could let the call go ahead. Claude's
 * questions are left to canUseTool.
 */
function deferringHook(answers: Map<string, PermissionResult>): HookCallback {
  return async (input): Promise<HookJSONOutput> => {
    if (input.hook_event_name !== "PreToolUse" || input.tool_name === ASK_USER_QUESTION) return {};
    const permission = answers.get(input.tool_use_id);
    if (!permission) return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "defer", permissionDecisionReason: "waits for a Tollgate approval" } };
    if (permission.behavior === "allow") return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: permission.updatedInput } };
    return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: permission.message } };
  };
}

/** A durable run's PostToolUse hook: reports what a claimed call ran with and returned, so the console shows it. */
function reportingHook(tollgate: Tollgate, claims: Map<string, { approvalId: string; claimKey: string }>): HookCallback {
  return async (input): Promise<HookJSONOutput> => {
    if (input.hook_event_name !== "PostToolUse") return {};
    const claim = claims.get(input.tool_use_id);
    if (!claim) return {};
    claims.delete(input.tool_use_id);
    await tollgate
      .call("approval.reportExecution", { ...claim, executedArgs: (input.tool_input ?? null) as Json, result: (input.tool_response ?? null) as Json })
      // The tool ran; a lost report must not fail the run and invite a second one.
      .catch((error: Error) => console.warn(`tollgate: approval ${claim.approvalId} ran, but reporting the execution failed: ${error.message}`));
    return {};
  };
}

function toolAsk(toolName: string, input: Record<string, unknown>, toolUseID: string, summary: string | undefined): Ask {
  return { tool: toolName, args: input as Json, externalId: toolUseID, allow: TOOL_DECISIONS, ...(summary ? { summary } : {}) };
}

function permissionCallback(options: ClaudeAgentApprovalOptions, tracking: AskTracking): CanUseTool {
  return async (toolName, input, call) => {
    call.signal.throwIfAborted();
    const ask = async (what: Ask) => {
      tracking.asked();
      const result = await askAndWait(options, what, call.signal);
      if (result.status === "CANCELED") tracking.canceled(result.approvalId);
      return result;
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
