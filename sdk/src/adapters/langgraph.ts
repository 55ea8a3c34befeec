// LangGraph.js, and LangChain v1 agents (which are LangGraph graphs): every
// interrupt of a run becomes a Tollgate approval, decided by a person in the
// console, and the run resumes with each decision in the shape its interrupt
// expects. Three shapes are understood:
//
// - LangChain's humanInTheLoopMiddleware (`HITLRequest`): one approval per
//   action request, resumed with `{decisions}` in their order. Its decisions
//   cannot carry a free-text answer, so none is offered.
// - Agent Inbox's `HumanInterrupt` (alone or as a one-element list): resumed
//   with a `HumanResponse` (in a list when it came as one).
// - Anything else passed to `interrupt(value)`: a string is a question, resumed
//   with the answer (null when declined); any other value is a tool call
//   (`{tool, args}` if it says so, else the value as arguments), resumed with
//   `{action, args, message, approvalId}`, where `args` are the arguments to run with.
//
// Several interrupts pending at once are asked together (one batch, shown as a
// group), decided one by one, and resumed together with a map by interrupt id.
// An interrupt raised inside a subgraph is asked on a request of that subgraph,
// begun under the run's request, so the console shows where in the graph it
// paused.
import { AsyncLocalStorage } from "node:async_hooks";
import { Command, INTERRUPT, MemorySaver } from "@langchain/langgraph";
import { decodeJwt } from "jose";
import type { ApprovalResult, DecisionAction, Json } from "../contract.ts";
import { argsSha256, type ReceiptClaims } from "../receipts.ts";
import { clip, SUMMARY_CHARS } from "./text.ts";
import { RunCanceledError, RunDrivenElsewhereError } from "../durable-run.ts";
import type { RequestHandle, Tollgate } from "../index.ts";

// One error for every adapter's canceled run; each adapter's entry point offers it.
export { RunCanceledError };

/** What the adapter needs of a compiled graph (a `CompiledStateGraph`, a LangChain agent). */
export interface InterruptibleGraph {
  invoke(input: unknown, config?: RunConfig): Promise<unknown>;
  getState(config: RunConfig, options?: { subgraphs?: boolean }): Promise<unknown>;
  /** A compiled graph's checkpointer (a LangChain agent's is on its `graph`). */
  checkpointer?: unknown;
  graph?: { checkpointer?: unknown };
}

export interface RunConfig {
  configurable?: { thread_id?: string; [key: string]: unknown };
  [key: string]: unknown;
}

export interface LangGraphRunOptions {
  tollgate: Tollgate;
  sessionId: string;
  /** The agent's name in the console. */
  agent: string;
  /** The caller's request, when this graph runs for another agent. */
  parentRequestId?: string;
  kind?: "agent" | "orchestrator";
  /** Markdown shown to the operator on every approval of this run (else each interrupt's own description). */
  summary?: string;
  /**
   * The durable run's id (defaults to `configurable.thread_id` when the graph's
   * checkpointer is durable): a process started again with it continues the
   * run from the checkpoint's pending interrupts, without asking again. Refused
   * with MemorySaver, whose checkpoints die with the process. `false`: no durable run.
   */
  runId?: string | false;
}

export interface LangGraphRunResult<T = unknown> {
  /** What the graph returned at the end (or, when a rejection ended the run, where it stopped). */
  result: T;
  /** The approval whose rejection ended the run without resuming the graph (an Agent Inbox interrupt that takes no rejection). */
  endedByRejection?: string;
  requestId: string;
  /** Approvals asked during the run. */
  approvals: number;
}

interface Interrupt {
  id: string;
  value: unknown;
}

interface Ask {
  tool: string;
  args: Json;
  kind?: "question";
  allow?: DecisionAction[];
  summary?: string;
  externalId: string;
}

/** One interrupt as approvals, and how to turn their results into its resume value. */
interface Translation {
  asks: Ask[];
  resume(results: ApprovalResult[]): unknown;
  /** Decided calls the graph will not run, and why (reported on their approvals). */
  notRun?(results: ApprovalResult[]): NotRun[];
  /** A decision the interrupt cannot be resumed with: the run ends there, without resuming the graph. */
  endsRun?(results: ApprovalResult[]): NotRun | null;
  /** Where the graph runs the approved calls itself: what ran, read from the state's messages after the resume. */
  ran?(results: ApprovalResult[], messages: unknown[]): Ran[];
}

interface Ran {
  approvalId: string;
  args: Json;
  result: Json;
}

interface NotRun {
  approvalId: string;
  reason: string;
}

/** Where a decision leaves the call: the action, the arguments to run with, the operator's message. */
interface Outcome {
  action: DecisionAction;
  args: unknown;
  message?: string;
}

/** What a raw `interrupt({tool, args})` resumes with: the decision, and the approval it came from. */
export interface ToolDecision extends Outcome {
  approvalId: string;
}

export type RunApproved<T> =
  | { ran: true; result: T }
  /** Not run here: rejected, or another process claimed the run (and may or may not have run it: Tollgate says). */
  | { ran: false; reason: "not approved" | "claimed by another process" ; result?: T };

/**
 * Runs an approved tool inside a graph's node at most once per approval, in
 * any process: it takes the approval's execution claim first and reports what
 * ran after, so the console shows it. A process that died between the two
 * leaves the claim, and the tool is not run again (the console says the
 * outcome is unknown). The approval's id is passed to the tool as an
 * idempotency key, for tools that accept one.
 */
export async function runApproved<T>(
  tollgate: Tollgate,
  decision: ToolDecision,
  tool: (args: unknown, context: { idempotencyKey: string }) => Promise<T> | T,
): Promise<RunApproved<T>> {
  if (decision.action !== "approve" && decision.action !== "edit") return { ran: false, reason: "not approved" };
  const { approvalId } = decision;
  const claimKey = `${tollgate.replicaId}:${approvalId}`;
  const claim = await tollgate.call("approval.claimExecution", { approvalId, claimKey });
  if (!claim.granted) {
    return claim.execution ? { ran: false, reason: "claimed by another process", result: claim.execution.result as T } : { ran: false, reason: "claimed by another process" };
  }
  const result = await tool(decision.args, { idempotencyKey: approvalId });
  await tollgate.call("approval.reportExecution", { approvalId, executedArgs: decision.args as Json, result: (result ?? null) as Json, claimKey });
  return { ran: true, result };
}

/** The run a graph's tools are running in, for runOnce: its client and its request. */
const runningIn = new AsyncLocalStorage<{ tollgate: Tollgate; requestId: string }>();

/** A LangChain tool as the graph's tool node invokes it: with a tool call, or with its arguments. */
interface InvokableTool {
  name: string;
  invoke(input: unknown, config?: Record<string, unknown>): Promise<unknown>;
}

/**
 * Wraps a tool that the graph runs itself (createAgent's tool node under
 * humanInTheLoopMiddleware, a ToolNode after an interrupt) so that a call
 * approved in Tollgate runs at most once, in any process: inside the tool it
 * finds the call's approval (this run's approved call of that tool with exactly
 * these arguments), takes its execution claim, runs the tool with the
 * approval's id as `configurable.idempotencyKey`, and reports what ran. A
 * process that died between the claim and the report leaves the claim: the
 * call is not run again, and the tool's result says why (the console says the
 * outcome is unknown). Calls no approval covers (tools the middleware does not
 * gate) run as they are.
 */
export function runOnce<T extends InvokableTool>(tool: T): T {
  const wrapped = Object.create(tool) as T;
  wrapped.invoke = async (input: unknown, config?: Record<string, unknown>) => {
    const run = runningIn.getStore();
    const call = isObject(input) && input.type === "tool_call" ? input : null;
    const args = call ? call.args : input;
    const approvalId = run ? await approvalOfCall(run, tool.name, args) : null;
    if (!run || !approvalId) return tool.invoke(input, config);
    const claimKey = `${run.tollgate.replicaId}:${approvalId}`;
    const claim = await run.tollgate.call("approval.claimExecution", { approvalId, claimKey });
    if (!claim.granted) {
      return claim.execution
        ? `approval ${approvalId} already ran this call; it runs at most once. What it returned: ${JSON.stringify(claim.execution.result ?? null)}`
        : `approval ${approvalId} was claimed at ${claim.claimedAt} by a process that stopped before it reported what ran: the call's outcome is unknown, and it is not run again`;
    }
    const configurable = { ...(isObject(config?.configurable) ? config.configurable : {}), idempotencyKey: approvalId };
    const output = await tool.invoke(input, { ...config, configurable });
    const content = isObject(output) && "content" in output && (output as { lc_kwargs?: unknown }).lc_kwargs ? output.content : output;
    await run.tollgate
      .call("approval.reportExecution", { approvalId, executedArgs: args as Json, result: (content ?? null) as Json, claimKey })
      // The tool ran; a lost report must not fail the run and invite a second one.
      .catch((error: Error) => console.warn(`tollgate: approval ${approvalId} ran, but reporting the execution failed: ${error.message}`));
    return output;
  };
  return wrapped;
}

/**
 * The run's approved call of `tool` with exactly these arguments (by the
 * receipt's hash of the approved, or edited, arguments): the latest one, so a
 * call repeated in a later turn finds its own approval.
 */
async function approvalOfCall(run: { tollgate: Tollgate; requestId: string }, tool: string, args: unknown): Promise<string | null> {
  const { approvals } = await run.tollgate.call("request.load", { requestId: run.requestId });
  const hash = argsSha256(args);
  const matching = approvals.filter((approval) => approval.tool === tool && mayRun(approval) && receiptHash(approval.decision?.receipt) === hash);
  return matching.at(-1)?.approvalId ?? null;
}

const mayRun = (result: ApprovalResult) =>
  (result.status === "APPROVED" || result.status === "EXPIRED") && (result.decision?.action === "approve" || result.decision?.action === "edit");

/** Read, not verified: the receipt came from Tollgate in this process's own answer. */
function receiptHash(receipt: string | undefined): string | null {
  if (!receipt) return null;
  try {
    return decodeJwt<Partial<ReceiptClaims>>(receipt).args_sha256 ?? null;
  } catch {
    return null;
  }
}

/**
 * Runs the graph on `input` until it ends, asking Tollgate about every
 * interrupt on the way. The run is one Tollgate request (its `resumeToken` is
 * the thread id); it completes when the graph ends and fails if the graph throws.
 * A canceled approval stops the run: the graph is not resumed, the request
 * fails (APPROVAL_CANCELED), as in the OpenAI Agents adapter, and this throws
 * RunCanceledError.
 */
export async function runWithApprovals<T = unknown>(
  graph: InterruptibleGraph,
  input: unknown,
  config: RunConfig,
  options: LangGraphRunOptions,
): Promise<LangGraphRunResult<T>> {
  const threadId = config.configurable?.thread_id;
  if (typeof threadId !== "string" || !threadId) {
    throw new TypeError("runWithApprovals needs config.configurable.thread_id: interrupts resume from the graph's checkpoint of that thread");
  }
  const { tollgate } = options;
  const runId = durableRunId(graph, threadId, options.runId);
  const begin = {
    sessionId: options.sessionId,
    agent: options.agent,
    kind: options.kind,
    parentRequestId: options.parentRequestId,
    framework: "langgraph",
  };
  const run = runId ? await tollgate.beginRun({ ...begin, runId }) : null;
  const root = run ?? (await tollgate.begin({ ...begin, resumeToken: threadId }));
  let asked = 0;
  // The graph's tools wrapped in runOnce find their approvals on this run's request.
  const inRun = <R>(work: () => Promise<R>) => runningIn.run({ tollgate, requestId: root.requestId }, work);
  try {
    // A continued run picks up where the checkpoint stands: its pending
    // interrupts are the ones already asked (found again by interrupt id).
    let result = await inRun(() => (run?.continued ? fromCheckpoint(graph, config) : graph.invoke(input, config)));
    for (;;) {
      const interrupts = interruptsOf(result);
      if (interrupts.length === 0) {
        await root.complete({ threadId });
        return { result: result as T, requestId: root.requestId, approvals: asked };
      }
      const origins = await subgraphOrigins(graph, config);
      const children = new Map<string, Promise<RequestHandle>>();
      // The subgraph's own request, begun under the run's once per subgraph and
      // turn (kept as a promise: its interrupts are asked at the same time).
      const requestFor = (interrupt: Interrupt): Promise<RequestHandle> => {
        const subgraph = origins.get(interrupt.id);
        if (!subgraph) return Promise.resolve(root);
        let child = children.get(subgraph);
        if (!child) {
          child = tollgate.begin({
            sessionId: root.sessionId,
            agent: subgraph,
            parentRequestId: root.requestId,
            framework: "langgraph",
            idempotencyKey: `langgraph:${root.requestId}:${interrupt.id}`,
          });
          children.set(subgraph, child);
        }
        return child;
      };
      // One batch per turn: the interrupts pending together are shown as a group.
      const batch = `langgraph:${interrupts[0]!.id}`;
      const resumes = await Promise.all(
        interrupts.map(async (interrupt) => {
          const translation = translate(interrupt);
          const request = await requestFor(interrupt);
          asked += translation.asks.length;
          const results = await Promise.all(translation.asks.map((ask) => askAndWait(tollgate, request.requestId, ask, batch, options.summary)));
          return { id: interrupt.id, results, translation };
        }),
      );
      // Decided calls the graph will not run say so on their approvals, never silently APPROVED.
      const notRun = resumes.flatMap(({ results, translation }) => translation.notRun?.(results) ?? []);
      const ending = resumes.map(({ results, translation }) => translation.endsRun?.(results) ?? null).find((end) => end !== null);
      if (ending) notRun.push(ending);
      for (const call of notRun) await tollgate.call("approval.reportNotRun", call);
      if (ending) {
        for (const child of children.values()) await (await child).complete();
        await root.complete({ threadId, endedByRejection: ending.approvalId });
        return { result: result as T, requestId: root.requestId, approvals: asked, endedByRejection: ending.approvalId };
      }
      // Only the process that still drives the run resumes the graph.
      await run?.hold();
      const resume = new Command({ resume: Object.fromEntries(resumes.map(({ id, results, translation }) => [id, translation.resume(results)])) });
      result = await inRun(() => graph.invoke(resume, config));
      if (resumes.some(({ translation }) => translation.ran)) {
        const messages = (((await graph.getState(config)) as { values?: { messages?: unknown[] } }).values?.messages ?? []) as unknown[];
        for (const ran of resumes.flatMap(({ results, translation }) => translation.ran?.(results, messages) ?? [])) await recordRun(tollgate, ran);
      }
      // The subgraphs' requests end once the graph has moved past their interrupts.
      for (const child of children.values()) await (await child).complete();
    }
  } catch (error) {
    run?.stop();
    // A run another process has taken over is that process's to end.
    if (!(error instanceof RunDrivenElsewhereError)) {
      const code = error instanceof RunCanceledError ? "APPROVAL_CANCELED" : "LANGGRAPH_ERROR";
      // A canceled task's requests have ended already: nothing to fail then.
      await root.fail({ message: error instanceof Error ? error.message : String(error), code }).catch(() => undefined);
    }
    throw error;
  }
}

/** The run's id: the one given, else the thread id when the checkpointer outlives the process; none with MemorySaver. */
function durableRunId(graph: InterruptibleGraph, threadId: string, given: string | false | undefined): string | null {
  if (given === false) return null;
  const checkpointer = graph.checkpointer ?? graph.graph?.checkpointer;
  const inMemory = checkpointer instanceof MemorySaver;
  if (given !== undefined) {
    if (inMemory) {
      throw new TypeError(
        `runId "${given}" needs a durable checkpointer: MemorySaver keeps the graph's checkpoints in this process's memory, so a process started again ` +
          "could not resume the run from them; compile the graph with a durable one (SqliteSaver, PostgresSaver) or leave out runId",
      );
    }
    return given;
  }
  return checkpointer && typeof checkpointer === "object" && !inMemory ? threadId : null;
}

/** The thread's checkpoint as a run's result: its pending interrupts, else (the graph had moved on) what running on from it gives. */
async function fromCheckpoint(graph: InterruptibleGraph, config: RunConfig): Promise<unknown> {
  const snapshot = (await graph.getState(config)) as { values?: unknown; next?: string[]; tasks?: { interrupts?: Interrupt[] }[] };
  const pending = (snapshot.tasks ?? []).flatMap((task) => task.interrupts ?? []);
  if (pending.length > 0) return { [INTERRUPT]: pending };
  return snapshot.next && snapshot.next.length > 0 ? graph.invoke(null, config) : snapshot.values;
}

/**
 * Records a call the graph ran under an approval (the claim, then the report,
 * as a tool that claims before it runs would); a call whose claim another
 * process holds (a tool wrapped with runApproved) has reported itself.
 */
async function recordRun(tollgate: Tollgate, ran: Ran): Promise<void> {
  const claimKey = `${tollgate.replicaId}:${ran.approvalId}`;
  const claim = await tollgate.call("approval.claimExecution", { approvalId: ran.approvalId, claimKey });
  if (!claim.granted) return;
  await tollgate.call("approval.reportExecution", { approvalId: ran.approvalId, executedArgs: ran.args, result: ran.result, claimKey });
}

/** The tool calls of the state's messages that have a result: id → name, args and the tool message's content. */
function toolCallsWithResults(messages: unknown[]): { name: string; args: unknown; result: unknown }[] {
  const calls = new Map<string, { name: string; args: unknown }>();
  const results = new Map<string, unknown>();
  for (const message of messages) {
    if (!isObject(message)) continue;
    if (Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls as { id?: string; name: string; args: unknown }[]) if (call.id) calls.set(call.id, { name: call.name, args: call.args });
    }
    if (typeof message.tool_call_id === "string") results.set(message.tool_call_id, message.content);
  }
  return [...calls].filter(([id]) => results.has(id)).map(([id, call]) => ({ ...call, result: results.get(id) }));
}

async function askAndWait(tollgate: Tollgate, requestId: string, ask: Ask, batch: string, summary: string | undefined): Promise<ApprovalResult> {
  const result = await tollgate.ask({
    requestId,
    tool: ask.tool,
    args: ask.args,
    externalId: ask.externalId,
    batch,
    ...(ask.kind ? { kind: ask.kind } : {}),
    ...(ask.allow ? { allow: ask.allow } : {}),
    ...((summary ?? ask.summary) ? { summary: clip((summary ?? ask.summary)!, SUMMARY_CHARS) } : {}),
  });
  if (result.status === "CANCELED") throw new RunCanceledError(result.approvalId);
  return result;
}

function interruptsOf(result: unknown): Interrupt[] {
  const found = (result as Record<string, unknown> | null)?.[INTERRUPT];
  if (!Array.isArray(found)) return [];
  return found.filter((item): item is Interrupt => typeof item?.id === "string");
}

/** Interrupt id → the name of the subgraph node it was raised in (absent: raised in the graph itself). */
async function subgraphOrigins(graph: InterruptibleGraph, config: RunConfig): Promise<Map<string, string>> {
  const origins = new Map<string, string>();
  const snapshot = (await graph.getState(config, { subgraphs: true })) as { tasks?: { name: string; interrupts?: Interrupt[]; state?: unknown }[] };
  for (const task of snapshot.tasks ?? []) {
    const isSubgraph = typeof task.state === "object" && task.state !== null && "values" in task.state;
    if (!isSubgraph) continue;
    for (const interrupt of task.interrupts ?? []) origins.set(interrupt.id, task.name);
  }
  return origins;
}

// ---- The interrupt shapes ------------------------------------------------------

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** What a decided (or ended) approval leaves for the call. */
function outcomeOf(result: ApprovalResult, proposedArgs: unknown): Outcome {
  const decision = result.decision;
  if (result.status === "APPROVED" || (result.status === "EXPIRED" && decision?.action === "approve")) {
    const edited = decision?.action === "edit";
    return { action: edited ? "edit" : "approve", args: edited ? decision!.args : proposedArgs, ...(decision?.message ? { message: decision.message } : {}) };
  }
  if (decision?.action === "respond") return { action: "respond", args: proposedArgs, message: decision.message ?? "" };
  const message = decision?.message ?? (result.status === "EXPIRED" ? "no decision in time" : "rejected");
  return { action: "reject", args: proposedArgs, message };
}

function translate(interrupt: Interrupt): Translation {
  const { value } = interrupt;
  if (isObject(value) && Array.isArray(value.actionRequests)) return fromHitlRequest(interrupt.id, value);
  const inbox = Array.isArray(value) && value.length === 1 && isObject(value[0]) && isObject(value[0].action_request) ? value[0] : isObject(value) && isObject(value.action_request) ? value : null;
  if (inbox) return fromHumanInterrupt(interrupt.id, inbox, Array.isArray(value));
  return fromRawValue(interrupt.id, value);
}

/** LangChain v1's humanInTheLoopMiddleware: `{actionRequests, reviewConfigs}` → `{decisions}`. */
function fromHitlRequest(id: string, request: Record<string, unknown>): Translation {
  const actions = request.actionRequests as { name: string; args: Record<string, unknown>; description?: string }[];
  const reviews = (Array.isArray(request.reviewConfigs) ? request.reviewConfigs : []) as { actionName: string; allowedDecisions?: string[] }[];
  const allowFor = (name: string): DecisionAction[] => {
    const allowed = reviews.find((review) => review.actionName === name)?.allowedDecisions ?? ["approve", "edit", "reject"];
    // Its decisions are approve, edit and reject: no free-text answer.
    return (["approve", "edit", "reject"] as const).filter((action) => allowed.includes(action));
  };
  return {
    asks: actions.map((action, index) => ({
      tool: action.name,
      args: action.args as Json,
      allow: allowFor(action.name),
      ...(action.description ? { summary: action.description } : {}),
      externalId: actions.length === 1 ? id : `${id}:${index}`,
    })),
    resume: (results) => ({
      decisions: results.map((result, index) => {
        const action = actions[index]!;
        const outcome = outcomeOf(result, action.args);
        if (outcome.action === "approve") return { type: "approve" };
        if (outcome.action === "edit") return { type: "edit", editedAction: { name: action.name, args: outcome.args } };
        return { type: "reject", ...(outcome.message ? { message: outcome.message } : {}) };
      }),
    }),
    // What the middleware ran: each approved (or edited) call with a tool message, by name and arguments.
    ran: (results, messages) => {
      const done = toolCallsWithResults(messages);
      return results.flatMap((result, index) => {
        const outcome = outcomeOf(result, actions[index]!.args);
        if (outcome.action !== "approve" && outcome.action !== "edit") return [];
        const call = done.find((candidate) => candidate.name === actions[index]!.name && argsSha256(candidate.args) === argsSha256(outcome.args));
        return call ? [{ approvalId: result.approvalId, args: call.args as Json, result: (call.result ?? null) as Json }] : [];
      });
    },
    // The middleware runs none of a turn's calls when one of them is rejected.
    notRun: (results) => {
      const outcomes = results.map((result, index) => outcomeOf(result, actions[index]!.args));
      if (!outcomes.some((outcome) => outcome.action === "reject")) return [];
      return results
        .filter((_result, index) => outcomes[index]!.action === "approve" || outcomes[index]!.action === "edit")
        .map((result) => ({ approvalId: result.approvalId, reason: "not run: another call of the same turn was rejected" }));
    },
  };
}

/** Agent Inbox's HumanInterrupt → HumanResponse. */
function fromHumanInterrupt(id: string, request: Record<string, unknown>, asList: boolean): Translation {
  const action = request.action_request as { action: string; args: Record<string, unknown> };
  const config = (isObject(request.config) ? request.config : {}) as Record<string, boolean | undefined>;
  const allow: DecisionAction[] = [];
  if (config.allow_accept) allow.push("approve");
  if (config.allow_edit) allow.push("edit");
  if (config.allow_respond) allow.push("respond");
  // A person can always say no: as a response where the graph takes one, else
  // as ignore; where it takes neither, the rejection ends the run.
  allow.push("reject");
  const takesRejection = Boolean(config.allow_respond || config.allow_ignore);
  return {
    asks: [
      {
        tool: action.action,
        args: action.args as Json,
        allow,
        ...(typeof request.description === "string" ? { summary: request.description } : {}),
        externalId: id,
      },
    ],
    resume: ([result]) => {
      const outcome = outcomeOf(result!, action.args);
      const response =
        outcome.action === "approve"
          ? { type: "accept", args: null }
          : outcome.action === "edit"
            ? { type: "edit", args: { action: action.action, args: outcome.args } }
            : outcome.action === "respond" || config.allow_respond
              ? { type: "response", args: outcome.message ?? "" }
              : { type: "ignore", args: null };
      return asList ? [response] : response;
    },
    endsRun: ([result]) => {
      const outcome = outcomeOf(result!, action.args);
      if (takesRejection || outcome.action !== "reject") return null;
      return { approvalId: result!.approvalId, reason: "rejected: the interrupt allows neither ignore nor response, so the run ended without resuming the graph" };
    },
  };
}

/** `interrupt(value)`: a string asks a question; anything else asks to run a tool. */
function fromRawValue(id: string, value: unknown): Translation {
  if (typeof value === "string") {
    return {
      asks: [{ tool: "question", args: {}, kind: "question", summary: value, externalId: id }],
      resume: ([result]) => {
        const outcome = outcomeOf(result!, {});
        return outcome.action === "respond" ? (outcome.message ?? "") : null;
      },
    };
  }
  const named = isObject(value) && typeof value.tool === "string";
  const tool = named ? (value.tool as string) : "interrupt";
  const args = (named ? (value.args ?? {}) : (value ?? null)) as Json;
  const summary = isObject(value) && typeof value.description === "string" ? value.description : undefined;
  return {
    asks: [{ tool, args, externalId: id, ...(summary ? { summary } : {}) }],
    resume: ([result]) => ({ ...outcomeOf(result!, args), approvalId: result!.approvalId }) satisfies ToolDecision,
  };
}
