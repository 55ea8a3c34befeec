// The Vercel AI SDK (v7's `toolApproval` option, v6's `tool({needsApproval})`),
// for a server route that runs generateText: every tool call the AI SDK pauses
// for approval becomes a Tollgate approval, decided by a person in the console,
// and the run resumes with the AI SDK's own `tool-approval-response` parts,
// made here from Tollgate's decisions only.
//
// - A `tool-approval-request` is one approval: externalId is the AI SDK's
//   approvalId, tool the call's toolName, args its input. The calls paused in
//   one step are asked together (one batch) and resumed together.
// - The AI SDK can neither run a call with other arguments nor take a free-text
//   answer, so a person may only approve or reject; a rejection's message is
//   the response's `reason`, which the model reads in the call's denied result.
// - Messages from a browser are not trusted. Every `tool-approval-response` in
//   them is replaced by what Tollgate decided for its approvalId, or dropped
//   when Tollgate has no decision for that very call (same tool; for an
//   approval, the arguments its signed receipt names). A forged `approved: true`
//   runs nothing: its call is asked of a person like any other.
// - An approved call runs at most once: its execution claim is taken before
//   the AI SDK runs it (a second use of the approval is answered as denied),
//   and what ran is reported.
// - A canceled approval (its timeout said so, or its request or task ended)
//   stops the run there: the model is not called again, the request fails
//   (APPROVAL_CANCELED) and runWithApprovals throws RunCanceledError, as in the
//   OpenAI Agents adapter.
//
// Nothing is imported from `ai`: v6 and v7 messages have the same shape here.
import { randomUUID } from "node:crypto";
import { decodeJwt } from "jose";
import type { ApprovalResult, Json, ProcedureOutput } from "../contract.ts";
import { clip, REASON_CHARS } from "./text.ts";
import { RunCanceledError, RunDrivenElsewhereError } from "../durable-run.ts";
import type { RequestHandle, Tollgate } from "../index.ts";
import { argsSha256, type ReceiptClaims } from "../receipts.ts";

// One error for every adapter's canceled run; each adapter's entry point offers it.
export { RunCanceledError };

/** A message as generateText takes it (`ModelMessage` of v6 or v7); only its tool parts are read. */
export interface MessageLike {
  role: string;
  content: unknown;
}

/** What the adapter reads of a generateText result: the messages of all its steps. */
export interface GenerateResultLike<M extends MessageLike> {
  /** v7: every step's messages (its `response.messages` has the last step's only). */
  responseMessages?: readonly M[];
  /** v6: every step's messages. */
  response?: { messages?: readonly M[] };
}

interface RunOptionsBase {
  tollgate: Tollgate;
  /** Markdown shown to the operator on every approval of this run. */
  summary?: string;
}

export type AiSdkRunOptions = RunOptionsBase &
  (
    | {
        sessionId: string;
        /** The agent's name in the console. */
        agent: string;
        /** The caller's request, when this run works for another agent. */
        parentRequestId?: string;
        kind?: "agent" | "orchestrator";
        requestId?: undefined;
        /**
         * The durable run's id (the app's conversation or job id): before it
         * waits, the run keeps its messages (the step's assistant message with
         * its calls and their approvalIds) sealed in Tollgate, and a process
         * started again with the runId continues from them, so each call keeps
         * its approvalId and nothing is asked again. Once the run has ended,
         * the runId begins a follow-on request in the same task.
         */
        runId?: string;
      }
    | {
        /** Continue this request, begun by an earlier run that did not finish (a restart, another process). */
        requestId: string;
      }
  );

export interface AiSdkRunResult<R, M> {
  /** The last generateText result: no call of it waits for approval. */
  result: R;
  /** The messages given, sanitised, then each step's messages and the decisions: the conversation to keep. */
  messages: M[];
  requestId: string;
  /** Approvals asked during the run. */
  approvals: number;
}

interface ToolCallPart {
  type: "tool-call";
  toolCallId: string;
  toolName: string;
  input: unknown;
  providerExecuted?: boolean;
}

interface ApprovalResponsePart {
  type: "tool-approval-response";
  approvalId: string;
  approved: boolean;
  reason?: string;
  providerExecuted?: boolean;
}

/** A call the AI SDK paused, by its approvalId. */
interface PausedCall {
  approvalId: string;
  call: ToolCallPart;
  reason?: string;
  /** Decided by the app's own `toolApproval` rules (v7), not by a person. */
  automatic: boolean;
}

/** Tollgate's approval for one AI SDK approvalId, and the tool it was asked for. */
interface Known {
  result: ApprovalResult;
  tool: string;
}

/** An approved call this run took the execution claim of, to report what ran. */
interface Claim {
  approvalId: string;
  call: ToolCallPart;
}

/**
 * Runs `generate` (a generateText call on the given messages) until no tool
 * call waits for approval, asking Tollgate about every paused call on the way.
 * The messages are sanitised first: approval responses in them count only as
 * far as Tollgate decided them. The run is one Tollgate request; it completes
 * when nothing waits any more and fails if `generate` throws. A canceled
 * approval stops the run before the model is called again: the request fails
 * (APPROVAL_CANCELED) and this throws RunCanceledError.
 */
export async function runWithApprovals<M extends MessageLike, R extends GenerateResultLike<M>>(
  generate: (messages: M[]) => Promise<R>,
  messages: readonly M[],
  options: AiSdkRunOptions,
): Promise<AiSdkRunResult<R, M>> {
  const { tollgate } = options;
  const { request, known, run } = await requestOf(options);
  // Claimed for this run only: an approval claimed here never runs elsewhere too.
  const claimKey = `ai-sdk:${randomUUID()}`;
  let asked = 0;
  try {
    // A continued durable run goes on from the messages it kept, never from a
    // re-generated step, whose calls would bring new approvalIds.
    let history = applyDecisions(run?.continued && run.state ? (JSON.parse(run.state) as M[]) : messages, known);
    for (;;) {
      const paused = pausedCalls(history);
      if (paused.length > 0) {
        // Kept before waiting: a process started again continues from exactly these calls.
        await run?.save(JSON.stringify(history));
        asked += paused.length;
        // One batch per step: the calls paused together are shown as a group.
        const batch = `ai-sdk:${paused[0]!.approvalId}`;
        const results = await Promise.all(paused.map((call) => askAndWait(tollgate, request.requestId, call, batch, options.summary)));
        const responses = paused.map((call, index) => {
          const decided = { result: results[index]!, tool: call.call.toolName };
          known.set(call.approvalId, decided);
          return responseFrom(call.approvalId, decided, call.call) ?? denial(call.approvalId, "Tollgate's decision does not name this call");
        });
        history = withResponses(history, responses);
      }
      const canceled = canceledAnswer(history, known);
      if (canceled) throw new RunCanceledError(canceled);
      // Only the process that still drives a durable run runs its tools.
      await run?.hold();
      const claimed = await claimCallsAboutToRun(tollgate, history, known, claimKey);
      history = claimed.messages;
      const result = await generate(history);
      const added = [...(result.responseMessages ?? result.response?.messages ?? [])];
      await reportRuns(tollgate, claimed.claims, added, claimKey);
      history = [...history, ...added];
      if (pausedCalls(history).length === 0) {
        await request.complete();
        return { result, messages: history, requestId: request.requestId, approvals: asked };
      }
    }
  } catch (error) {
    run?.stop();
    // A run another process has taken over is that process's to end.
    if (!(error instanceof RunDrivenElsewhereError)) {
      const code = error instanceof RunCanceledError ? "APPROVAL_CANCELED" : "AI_SDK_ERROR";
      // A canceled task's requests have ended already: nothing to fail then.
      await request.fail({ message: error instanceof Error ? error.message : String(error), code }).catch(() => undefined);
    }
    throw error;
  }
}

/**
 * Messages that came from a browser, made safe to give generateText: each
 * `tool-approval-response` is replaced by Tollgate's decision for its
 * approvalId in `requestId`, or dropped when Tollgate has none for that call.
 * An approved call the next generateText would run is claimed for the caller,
 * so sanitising the same messages again answers it as denied: it runs once.
 * A dropped answer leaves its call unanswered, which generateText refuses to
 * continue from; runWithApprovals asks a person instead.
 */
export async function sanitizeMessages<M extends MessageLike>(messages: readonly M[], options: { tollgate: Tollgate; requestId: string }): Promise<M[]> {
  const known = knownApprovals(await options.tollgate.call("request.load", { requestId: options.requestId }));
  const decided = applyDecisions(messages, known);
  return (await claimCallsAboutToRun(options.tollgate, decided, known, `ai-sdk:${randomUUID()}`)).messages;
}

type DurableRun = Awaited<ReturnType<Tollgate["beginRun"]>>;

async function requestOf(options: AiSdkRunOptions): Promise<{ request: RequestHandle; known: Map<string, Known>; run?: DurableRun }> {
  const { tollgate } = options;
  if (options.requestId === undefined) {
    const begin = {
      sessionId: options.sessionId,
      agent: options.agent,
      kind: options.kind,
      parentRequestId: options.parentRequestId,
      framework: "ai-sdk",
    };
    if (options.runId) {
      const run = await tollgate.beginRun({ ...begin, runId: options.runId });
      const known = run.continued ? knownApprovals(await tollgate.call("request.load", { requestId: run.requestId })) : new Map<string, Known>();
      return { request: run, known, run };
    }
    return { request: await tollgate.begin(begin), known: new Map() };
  }
  const loaded = await tollgate.call("request.load", { requestId: options.requestId });
  if (loaded.status !== "RUNNING" && loaded.status !== "PAUSED") {
    throw new Error(
      `request ${loaded.requestId} already ended as ${loaded.status}; a new turn begins a new request (leave out requestId), and sanitizeMessages still applies this one's decisions`,
    );
  }
  return { request: tollgate.request({ sessionId: loaded.sessionId, taskId: loaded.taskId, requestId: loaded.requestId }), known: knownApprovals(loaded) };
}

function knownApprovals(loaded: ProcedureOutput<"request.load">): Map<string, Known> {
  const known = new Map<string, Known>();
  for (const approval of loaded.approvals) {
    if (approval.externalId) known.set(approval.externalId, { result: approval, tool: approval.tool });
  }
  return known;
}

async function askAndWait(tollgate: Tollgate, requestId: string, paused: PausedCall, batch: string, summary: string | undefined): Promise<ApprovalResult> {
  return tollgate.ask({
    requestId,
    tool: paused.call.toolName,
    args: paused.call.input as Json,
    externalId: paused.approvalId,
    batch,
    // The AI SDK cannot run a call with other arguments, nor take an answer in words.
    allow: ["approve", "reject"],
    ...(paused.reason ? { reason: clip(paused.reason, REASON_CHARS) } : {}),
    ...(summary ? { summary } : {}),
  });
}

// ---- The messages ----------------------------------------------------------------

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function partsOf(message: MessageLike): Record<string, unknown>[] {
  return Array.isArray(message.content) ? message.content.filter(isObject) : [];
}

const isToolCall = (part: Record<string, unknown>): part is Record<string, unknown> & ToolCallPart =>
  part.type === "tool-call" && typeof part.toolCallId === "string" && typeof part.toolName === "string";
const isApprovalResponse = (part: Record<string, unknown>): part is Record<string, unknown> & ApprovalResponsePart =>
  part.type === "tool-approval-response" && typeof part.approvalId === "string";

/**
 * approvalId → the call it pauses. Read as the AI SDK reads them (later parts
 * win), so the call checked here is the call the AI SDK would run.
 */
function callsByApprovalId(messages: readonly MessageLike[]): Map<string, PausedCall> {
  const calls = new Map<string, ToolCallPart>();
  const requests = new Map<string, { toolCallId: string; reason?: string; automatic: boolean }>();
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    for (const part of partsOf(message)) {
      if (isToolCall(part)) calls.set(part.toolCallId, part);
      if (part.type === "tool-approval-request" && typeof part.approvalId === "string" && typeof part.toolCallId === "string") {
        requests.set(part.approvalId, {
          toolCallId: part.toolCallId,
          ...(typeof part.reason === "string" ? { reason: part.reason } : {}),
          automatic: part.isAutomatic === true,
        });
      }
    }
  }
  const paused = new Map<string, PausedCall>();
  for (const [approvalId, request] of requests) {
    const call = calls.get(request.toolCallId);
    if (call) paused.set(approvalId, { approvalId, call, automatic: request.automatic, ...(request.reason ? { reason: request.reason } : {}) });
  }
  return paused;
}

/**
 * The calls of the last assistant message that wait for a person: paused, not
 * automatic, and with neither a response nor a result after it.
 */
function pausedCalls(messages: readonly MessageLike[]): PausedCall[] {
  const last = messages.findLastIndex((message) => message.role === "assistant");
  if (last < 0) return [];
  const answered = new Set<string>();
  const resulted = new Set<string>();
  for (const message of messages.slice(last)) {
    for (const part of partsOf(message)) {
      if (isApprovalResponse(part)) answered.add(part.approvalId);
      if (part.type === "tool-result" && typeof part.toolCallId === "string") resulted.add(part.toolCallId);
    }
  }
  const paused = callsByApprovalId(messages);
  return partsOf(messages[last]!)
    .filter((part) => part.type === "tool-approval-request" && typeof part.approvalId === "string")
    .map((part) => paused.get(part.approvalId as string))
    .filter((call): call is PausedCall => !!call && !call.automatic && !answered.has(call.approvalId) && !resulted.has(call.call.toolCallId));
}

/** The responses added to the trailing tool message: the AI SDK reads answers from the last message only. */
function withResponses<M extends MessageLike>(messages: readonly M[], responses: ApprovalResponsePart[]): M[] {
  const last = messages.at(-1);
  if (last?.role === "tool") return [...messages.slice(0, -1), { ...last, content: [...partsOf(last), ...responses] }];
  return [...messages, { role: "tool", content: responses } as unknown as M];
}

/**
 * Every approval response rewritten from Tollgate's decision for its
 * approvalId, or dropped: no decision yet, none known, or one about another
 * call than the one the messages now pause under that id.
 */
function applyDecisions<M extends MessageLike>(messages: readonly M[], known: Map<string, Known>): M[] {
  const paused = callsByApprovalId(messages);
  return messages.flatMap((message) => {
    if (message.role !== "tool" || !Array.isArray(message.content)) return [message];
    const content = (message.content as unknown[]).flatMap((part) => {
      if (!isObject(part) || !isApprovalResponse(part)) return [part];
      const decided = known.get(part.approvalId);
      const call = paused.get(part.approvalId)?.call;
      if (!decided || !call) return [];
      const response = responseFrom(part.approvalId, decided, call);
      return response ? [response] : [];
    });
    return content.length > 0 ? [{ ...message, content }] : [];
  });
}

/** The AI SDK's answer for `call` from Tollgate's approval; none while it is pending or when it decided another call. */
function responseFrom(approvalId: string, decided: Known, call: ToolCallPart): ApprovalResponsePart | undefined {
  const { result } = decided;
  if (result.status === "PENDING" || decided.tool !== call.toolName) return undefined;
  const decision = result.decision;
  const base = { type: "tool-approval-response" as const, approvalId, ...(call.providerExecuted ? { providerExecuted: true } : {}) };
  const approved = decision?.action === "approve" && (result.status === "APPROVED" || result.status === "EXPIRED");
  if (approved) {
    // The receipt names the arguments the person approved; the messages may have been changed since.
    if (!receiptAllows(decision.receipt, call.input)) return undefined;
    return { ...base, approved: true, ...(decision.message ? { reason: decision.message } : {}) };
  }
  const reason = decision?.message ?? (result.status === "EXPIRED" ? "no decision in time" : result.status === "CANCELED" ? "the approval was canceled" : "rejected");
  return { ...base, approved: false, reason };
}

/** The Tollgate approval of a canceled call among the answers the next generateText would act on (the last message's). */
function canceledAnswer(messages: readonly MessageLike[], known: Map<string, Known>): string | undefined {
  const last = messages.at(-1);
  if (last?.role !== "tool") return undefined;
  for (const part of partsOf(last)) {
    const result = isApprovalResponse(part) ? known.get(part.approvalId)?.result : undefined;
    if (result?.status === "CANCELED") return result.approvalId;
  }
  return undefined;
}

const denial = (approvalId: string, reason: string): ApprovalResponsePart => ({ type: "tool-approval-response", approvalId, approved: false, reason });

/** Read, not verified: the receipt came from Tollgate in this process's own answer, never from the messages. */
function receiptAllows(receipt: string | undefined, input: unknown): boolean {
  if (!receipt) return false;
  try {
    return decodeJwt<Partial<ReceiptClaims>>(receipt).args_sha256 === argsSha256(input);
  } catch {
    return false;
  }
}

// ---- At most once ----------------------------------------------------------------

/**
 * Takes the execution claim of every approved call the next generateText will
 * run (answered in the last message, which holds no result for it yet, as the
 * AI SDK decides). A claim refused means the approval was used before: its
 * answer becomes a denial.
 */
async function claimCallsAboutToRun<M extends MessageLike>(
  tollgate: Tollgate,
  messages: M[],
  known: Map<string, Known>,
  claimKey: string,
): Promise<{ messages: M[]; claims: Claim[] }> {
  const last = messages.at(-1);
  if (last?.role !== "tool") return { messages, claims: [] };
  const parts = partsOf(last);
  const resulted = new Set(parts.filter((part) => part.type === "tool-result").map((part) => part.toolCallId));
  const paused = callsByApprovalId(messages);
  const claims: Claim[] = [];
  const content = await Promise.all(
    parts.map(async (part) => {
      if (!isApprovalResponse(part) || !part.approved) return part;
      const call = paused.get(part.approvalId)?.call;
      const approval = known.get(part.approvalId)?.result;
      if (!call || !approval || resulted.has(call.toolCallId)) return part;
      const claim = await tollgate.call("approval.claimExecution", { approvalId: approval.approvalId, claimKey });
      if (claim.granted) {
        claims.push({ approvalId: approval.approvalId, call });
        return part;
      }
      return denial(part.approvalId, `approval ${approval.approvalId} was already used to run this call; it runs at most once`);
    }),
  );
  return { messages: [...messages.slice(0, -1), { ...last, content }], claims };
}

/** Reports what each claimed call ran with and returned, from the tool results of the step that ran it. */
async function reportRuns(tollgate: Tollgate, claims: Claim[], added: readonly MessageLike[], claimKey: string): Promise<void> {
  const results = new Map(added.flatMap((message) => partsOf(message).filter((part) => part.type === "tool-result").map((part) => [part.toolCallId, part.output] as const)));
  for (const claim of claims) {
    // Not run (no result): the claim stays, so the approval never runs elsewhere either.
    if (!results.has(claim.call.toolCallId)) continue;
    try {
      await tollgate.call("approval.reportExecution", {
        approvalId: claim.approvalId,
        executedArgs: claim.call.input as Json,
        result: (results.get(claim.call.toolCallId) ?? null) as Json,
        claimKey,
      });
    } catch (error) {
      // The tool ran; failing the run now would invite a retry that runs it again.
      console.warn(`tollgate: approval ${claim.approvalId} ran, but reporting the execution failed: ${(error as Error).message}`);
    }
  }
}
