// OpenAI Agents JS (@openai/agents): every tool call the run pauses on
// (`needsApproval`, `result.interruptions`) becomes a Tollgate approval,
// decided by a person in the console, and the run resumes with
// `state.approve(item)` or `state.reject(item, {message})`, the operator's
// message being the call's output the model reads. Its decisions cannot edit
// arguments or carry a free-text answer, so only approve and reject are offered.
//
// A run is one Tollgate request. Each pause is a request of its own under it,
// begun with the serialised RunState as its resumeToken, and the calls paused
// in that turn are asked on it as one batch (externalId = the call's callId).
// So any process with the same agent can resume a pause from Tollgate alone
// (resumeFromTollgate), also after the process that paused it has exited.
// Before a resumed run executes an approved call, it takes the approval's
// execution claim: of two processes resuming the same pause, one runs the tool.
import { randomUUID } from "node:crypto";
import { run, RunContext, RunState, type Agent, type AgentInputItem, type NonStreamRunOptions, type Runner, type RunResult, type RunToolApprovalItem } from "@openai/agents";
import type { ApprovalResult, Json } from "../contract.ts";
import { clip, SUMMARY_CHARS } from "./text.ts";
import { RunCanceledError, RunDrivenElsewhereError } from "../durable-run.ts";
import type { Tollgate } from "../index.ts";

// One error for every adapter's canceled run; each adapter's entry point offers it.
export { RunCanceledError };

/** One tool call the run paused on, as the operator sees it. */
export interface PausedCall {
  /** The model's id of the call (the approval's externalId). */
  callId: string;
  tool: string;
  args: Json;
  /** The agent whose tool it is. */
  agent: string;
}

interface SharedOptions {
  tollgate: Tollgate;
  /** Markdown shown to the operator before the arguments: one text for every call, or one per call. */
  summary?: string | ((call: PausedCall) => string | undefined);
  /** The Runner to run with (its model provider, tracing, ...); default: the SDK's own `run`. */
  runner?: Runner;
  /** Options for every run of the agent (maxTurns, signal, ...). The context is the state's once a run has paused. */
  runOptions?: NonStreamRunOptions<any>;
}

export interface OpenAIAgentsRunOptions extends SharedOptions {
  sessionId: string;
  /** The run's name in the console; defaults to the agent's name. */
  agentName?: string;
  /** The caller's request, when this run works for another agent. */
  parentRequestId?: string;
  kind?: "agent" | "orchestrator";
  /**
   * The durable run's id (the app's conversation or job id): a process
   * started again with it continues the run from its last pause, sealed in
   * Tollgate, without asking again; once the run has ended, it begins a
   * follow-on request in the same task.
   */
  runId?: string;
}

export interface OpenAIAgentsResumeOptions extends SharedOptions {
  /**
   * The run's context for the resumed run. The app's context is not stored
   * with the paused run (it may hold credentials): a process that resumes
   * passes its own.
   */
  context?: unknown;
}

export interface OpenAIAgentsRunResult<TAgent extends Agent<any, any>> {
  /** The finished run: finalOutput, newItems, history, ... */
  result: RunResult<any, TAgent>;
  /** The run's request. */
  requestId: string;
  /** Approvals asked by this process. */
  approvals: number;
}

export type OpenAIAgentsPauseResult<TAgent extends Agent<any, any>> =
  | ({ status: "completed" } & OpenAIAgentsRunResult<TAgent>)
  | {
      status: "paused";
      /** The run's request. */
      requestId: string;
      /** The pause's request: what resumeFromTollgate takes, in any process. */
      pauseRequestId: string;
      approvalIds: string[];
    };

/** Another process resumed this pause first (or already did): it runs the approved calls, this one must not. */
export class AlreadyResumedError extends Error {
  constructor(readonly pauseRequestId: string, detail: string) {
    super(`the paused run of request ${pauseRequestId} ${detail}; it is resumed once, so this process leaves it alone`);
    this.name = "AlreadyResumedError";
  }
}

const FRAMEWORK = "openai-agents";
/** request.begin's limit on resumeToken. */
const RESUME_TOKEN_MAX_CHARS = 256 * 1024;

/** What a pause request's resumeToken holds. */
interface ResumeToken {
  framework: typeof FRAMEWORK;
  runRequestId: string;
  /** RunState.toJSON() of the paused run. */
  state: unknown;
}

/** What a durable run keeps in Tollgate (sealed) at each pause: the pause's request and the serialised run. */
interface DurableState {
  pauseRequestId: string;
  state: unknown;
}

type DurableRun = Awaited<ReturnType<Tollgate["beginRun"]>>;

/** The run as this process drives it. */
interface Drive<TAgent extends Agent<any, any>> {
  agent: TAgent;
  options: SharedOptions;
  sessionId: string;
  runRequestId: string;
  /** The durable run this process drives, when the app named one. */
  run?: DurableRun;
  /** The pause being resumed, if any: it fails with the run. */
  pauseRequestId?: string;
  asked: number;
}

/** One pause on Tollgate: its request and its approvals by callId. */
interface Pause {
  requestId: string;
  approvals: Map<string, ApprovalResult>;
}

/**
 * Runs the agent on `input` until the run ends, asking Tollgate about every
 * call it pauses on and waiting here for the decisions. The run's request
 * completes with the final output, or fails if the run throws.
 */
export async function runWithApprovals<TAgent extends Agent<any, any>>(
  agent: TAgent,
  input: string | AgentInputItem[],
  options: OpenAIAgentsRunOptions,
): Promise<OpenAIAgentsRunResult<TAgent>> {
  const drive = await beginRun(agent, options);
  return owning(drive, async () => {
    const kept = drive.run?.continued && drive.run.state ? (JSON.parse(drive.run.state) as DurableState) : null;
    if (kept) return continueKept(drive, kept, options.runOptions?.context);
    const result = await execute(drive, input);
    if (result.interruptions.length === 0) return finish(drive, result);
    // The live state goes on here (its context unserialised); Tollgate holds a copy for other processes.
    return continueRun(drive, result.state, await pauseOnTollgate(drive, result.state));
  });
}

/** A durable run continued by a new process: from its last pause, as kept, with the approvals asked then. */
async function continueKept<TAgent extends Agent<any, any>>(drive: Drive<TAgent>, kept: DurableState, context: unknown): Promise<OpenAIAgentsRunResult<TAgent>> {
  const serialised = JSON.stringify(kept.state);
  const state = context === undefined ? await RunState.fromString(drive.agent, serialised) : await RunState.fromStringWithContext(drive.agent, serialised, new RunContext(context));
  const loaded = await drive.options.tollgate.call("request.load", { requestId: kept.pauseRequestId });
  const approvals = new Map<string, ApprovalResult>();
  for (const approval of loaded.approvals) if (approval.externalId) approvals.set(approval.externalId, approval);
  return continueRun(drive, state as RunState<any, TAgent>, { requestId: kept.pauseRequestId, approvals });
}

/**
 * Runs the agent on `input` until the run ends or first pauses; on a pause,
 * asks Tollgate and returns without waiting, so this process may exit.
 * Pass `pauseRequestId` to resumeFromTollgate, here or in another process.
 */
export async function runUntilPause<TAgent extends Agent<any, any>>(
  agent: TAgent,
  input: string | AgentInputItem[],
  options: OpenAIAgentsRunOptions,
): Promise<OpenAIAgentsPauseResult<TAgent>> {
  const drive = await beginRun(agent, options);
  return owning(drive, async () => {
    const result = await execute(drive, input);
    if (result.interruptions.length === 0) return { status: "completed" as const, ...(await finish(drive, result)) };
    const pause = await pauseOnTollgate(drive, result.state);
    return {
      status: "paused" as const,
      requestId: drive.runRequestId,
      pauseRequestId: pause.requestId,
      approvalIds: [...pause.approvals.values()].map((approval) => approval.approvalId),
    };
  });
}

/**
 * Resumes a paused run from Tollgate alone: rebuilds it from the pause
 * request's resumeToken (with `agent`, defined as in the process that paused
 * it), waits for the decisions still pending, applies each by callId, and runs
 * on until the run ends, asking about later pauses and waiting for them here.
 */
export async function resumeFromTollgate<TAgent extends Agent<any, any>>(
  agent: TAgent,
  pauseRequestId: string,
  options: OpenAIAgentsResumeOptions,
): Promise<OpenAIAgentsRunResult<TAgent>> {
  const loaded = await options.tollgate.call("request.load", { requestId: pauseRequestId });
  const token = parseResumeToken(pauseRequestId, loaded.resumeToken);
  if (loaded.status === "COMPLETED") throw new AlreadyResumedError(pauseRequestId, "was already resumed");
  if (loaded.status !== "RUNNING" && loaded.status !== "PAUSED") throw new Error(`request ${pauseRequestId} ended as ${loaded.status}; there is no paused run to resume`);
  const serialised = JSON.stringify(token.state);
  const state =
    options.context === undefined
      ? await RunState.fromString(agent, serialised)
      : await RunState.fromStringWithContext(agent, serialised, new RunContext(options.context));
  const drive: Drive<TAgent> = { agent, options, sessionId: loaded.sessionId, runRequestId: token.runRequestId, asked: 0 };
  const approvals = new Map<string, ApprovalResult>();
  for (const approval of loaded.approvals) if (approval.externalId) approvals.set(approval.externalId, approval);
  return owning(drive, () => continueRun(drive, state as RunState<any, TAgent>, { requestId: pauseRequestId, approvals }));
}

// ---- The run's life on Tollgate ----------------------------------------------

async function beginRun<TAgent extends Agent<any, any>>(agent: TAgent, options: OpenAIAgentsRunOptions): Promise<Drive<TAgent>> {
  const begin = {
    sessionId: options.sessionId,
    agent: options.agentName ?? agent.name,
    kind: options.kind,
    parentRequestId: options.parentRequestId,
    framework: FRAMEWORK,
  };
  if (options.runId) {
    const run = await options.tollgate.beginRun({ ...begin, runId: options.runId });
    return { agent, options, sessionId: run.sessionId, runRequestId: run.requestId, run, asked: 0 };
  }
  const root = await options.tollgate.begin(begin);
  return { agent, options, sessionId: options.sessionId, runRequestId: root.requestId, asked: 0 };
}

/** Runs `work`; if it throws, the run's requests fail, unless another process owns the run now. */
async function owning<TAgent extends Agent<any, any>, T>(drive: Drive<TAgent>, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    drive.run?.stop();
    if (!(error instanceof AlreadyResumedError) && !(error instanceof RunDrivenElsewhereError)) {
      const failure = { message: error instanceof Error ? error.message : String(error), code: error instanceof RunCanceledError ? "APPROVAL_CANCELED" : "OPENAI_AGENTS_ERROR" };
      // A canceled task's requests have ended already: nothing to fail then.
      const ending = [drive.pauseRequestId, drive.runRequestId].filter((id): id is string => id !== undefined);
      for (const requestId of ending) await drive.options.tollgate.call("request.fail", { requestId, error: failure }).catch(() => undefined);
    }
    throw error;
  }
}

function execute<TAgent extends Agent<any, any>>(drive: Drive<TAgent>, input: string | AgentInputItem[] | RunState<any, TAgent>): Promise<RunResult<any, TAgent>> {
  const { runner, runOptions } = drive.options;
  const options = { ...runOptions, stream: false as const };
  return runner ? runner.run(drive.agent, input, options) : run(drive.agent, input, options);
}

async function finish<TAgent extends Agent<any, any>>(drive: Drive<TAgent>, result: RunResult<any, TAgent>): Promise<OpenAIAgentsRunResult<TAgent>> {
  drive.run?.stop();
  await drive.options.tollgate.call("request.complete", { requestId: drive.runRequestId, output: { finalOutput: (result.finalOutput ?? null) as Json } });
  return { result, requestId: drive.runRequestId, approvals: drive.asked };
}

/** Resumes pause after pause until the run ends; each pause request completes once the run has moved past it. */
async function continueRun<TAgent extends Agent<any, any>>(drive: Drive<TAgent>, state: RunState<any, TAgent>, pause: Pause): Promise<OpenAIAgentsRunResult<TAgent>> {
  for (;;) {
    drive.pauseRequestId = pause.requestId;
    const result = await resume(drive, state, pause);
    // The next pause is stored before this one is marked done: a crash in between loses no state.
    const next = result.interruptions.length > 0 ? await pauseOnTollgate(drive, result.state) : null;
    await drive.options.tollgate.call("request.complete", { requestId: pause.requestId });
    drive.pauseRequestId = undefined;
    if (!next) return finish(drive, result);
    state = result.state;
    pause = next;
  }
}

/**
 * The serialised run without the app's own context (`context.context`), which
 * may hold credentials and must not reach Tollgate's database; the run's
 * approvals and usage, kept beside it, stay.
 */
function withoutAppContext(serialised: unknown): unknown {
  const run = serialised as { context?: { context?: unknown } };
  return run.context ? { ...run, context: { ...run.context, context: {} } } : run;
}

/**
 * Begins the pause's request with the serialised run and asks about each
 * paused call, as one batch. A durable run keeps the serialised run sealed in
 * Tollgate (run.hold) before it asks, not in the pause's resumeToken.
 */
async function pauseOnTollgate<TAgent extends Agent<any, any>>(drive: Drive<TAgent>, state: RunState<any, TAgent>): Promise<Pause> {
  const resumeToken = JSON.stringify({ framework: FRAMEWORK, runRequestId: drive.runRequestId, state: withoutAppContext(state.toJSON()) } satisfies ResumeToken);
  if (resumeToken.length > RESUME_TOKEN_MAX_CHARS) {
    throw new Error(
      `the paused run's state is ${resumeToken.length} characters, over Tollgate's ${RESUME_TOKEN_MAX_CHARS}-character resumeToken limit; shorten the run's history (e.g. with a session) before it pauses`,
    );
  }
  const pause = await drive.options.tollgate.begin({
    sessionId: drive.sessionId,
    agent: state.currentAgent.name,
    parentRequestId: drive.runRequestId,
    framework: FRAMEWORK,
    // A durable run keeps it sealed instead (below).
    ...(drive.run ? {} : { resumeToken }),
  });
  if (drive.run) await drive.run.save(JSON.stringify({ pauseRequestId: pause.requestId, state: withoutAppContext(state.toJSON()) } satisfies DurableState));
  const approvals = new Map<string, ApprovalResult>();
  for (const item of state.getInterruptions()) {
    const call = pausedCall(item);
    approvals.set(call.callId, await ask(drive, pause.requestId, call));
  }
  return { requestId: pause.requestId, approvals };
}

function ask<TAgent extends Agent<any, any>>(drive: Drive<TAgent>, pauseRequestId: string, call: PausedCall): Promise<ApprovalResult> {
  const { summary } = drive.options;
  const text = typeof summary === "function" ? summary(call) : summary;
  drive.asked += 1;
  return drive.options.tollgate.call("approval.request", {
    requestId: pauseRequestId,
    tool: call.tool,
    args: call.args,
    externalId: call.callId,
    // The calls of one pause are shown, and resumed, together.
    batch: `${FRAMEWORK}:${pauseRequestId}`,
    // OpenAI Agents can only approve or reject a call: no edited arguments, no free-text answer.
    allow: ["approve", "reject"],
    ...(text ? { summary: clip(text, SUMMARY_CHARS) } : {}),
  });
}

/**
 * Waits for every decision of the pause, applies each to its call, claims the
 * approved calls' execution and runs the agent on. Reports what each approved
 * call returned, so the console shows what ran.
 */
async function resume<TAgent extends Agent<any, any>>(drive: Drive<TAgent>, state: RunState<any, TAgent>, pause: Pause): Promise<RunResult<any, TAgent>> {
  const { tollgate } = drive.options;
  const decided = await Promise.all(
    state.getInterruptions().map(async (item) => {
      const call = pausedCall(item);
      // Absent when the pausing process died before asking about every call.
      const asked = pause.approvals.get(call.callId) ?? (await ask(drive, pause.requestId, call));
      const result = asked.status === "PENDING" ? await tollgate.waitForDecision(asked.approvalId) : asked;
      return { item, call, result };
    }),
  );
  const canceled = decided.find(({ result }) => result.status === "CANCELED");
  if (canceled) throw new RunCanceledError(canceled.result.approvalId);

  // Only the process that still drives a durable run runs its tools.
  await drive.run?.hold();
  const claimKey = `${FRAMEWORK}:${randomUUID()}`;
  const approved: typeof decided = [];
  for (const entry of decided) {
    const { item, result } = entry;
    if (!mayRun(result)) {
      // Without a message the SDK's default (or the runner's toolErrorFormatter) tells the model.
      state.reject(item, result.decision?.message ? { message: result.decision.message } : undefined);
      continue;
    }
    const claim = await tollgate.call("approval.claimExecution", { approvalId: result.approvalId, claimKey });
    if (claim.granted) {
      state.approve(item);
      approved.push(entry);
      continue;
    }
    // Without a durable run's lease, another live process may be running it right now: leave the pause to it.
    if (!drive.run) {
      throw new AlreadyResumedError(
        pause.requestId,
        claim.execution ? `was resumed by another process at ${claim.claimedAt}` : `was claimed by a process at ${claim.claimedAt} that has not reported what ran (it may have stopped: the outcome is unknown)`,
      );
    }
    // This process holds the durable run, so the claim was its earlier driver's, which stopped: the call is
    // never run again; the model learns why in its place, and the run goes on to its end.
    state.reject(item, { message: notRunAgain(result.approvalId, claim.claimedAt, claim.execution) });
  }

  const next = await execute(drive, state);
  const outputs = new Map<string, unknown>();
  for (const item of next.newItems) {
    if (item.type === "tool_call_output_item" && "callId" in item.rawItem) outputs.set(item.rawItem.callId, item.output);
  }
  for (const { call, result } of approved) {
    if (!outputs.has(call.callId)) continue;
    await tollgate
      .call("approval.reportExecution", { approvalId: result.approvalId, executedArgs: call.args, result: (outputs.get(call.callId) ?? null) as Json, claimKey })
      // The tool ran; a lost report must not fail the run and invite a second one.
      .catch((error: Error) => console.warn(`tollgate: approval ${result.approvalId} ran, but reporting the execution failed: ${error.message}`));
  }
  return next;
}

// ---- Mapping -------------------------------------------------------------------

const mayRun = (result: ApprovalResult) => result.status === "APPROVED" || (result.status === "EXPIRED" && result.decision?.action === "approve");

/** What the model reads in place of a call a stopped process had claimed: it is not run again. */
function notRunAgain(approvalId: string, claimedAt: string, execution: { result?: unknown; at: string } | null): string {
  return execution
    ? `approval ${approvalId} already ran this call (reported at ${execution.at}); it runs at most once. What it returned: ${JSON.stringify(execution.result ?? null)}`
    : `approval ${approvalId} was claimed at ${claimedAt} by a process that stopped before it reported what ran: the call's outcome is unknown, and it is not run again`;
}

function pausedCall(item: RunToolApprovalItem): PausedCall {
  const raw = item.rawItem as { type: string; callId?: string; id?: string; action?: unknown; actions?: unknown; operation?: unknown; providerData?: Record<string, unknown> };
  // Function, shell, computer and apply-patch calls have a callId; a hosted MCP approval request only its id.
  const callId = raw.callId ?? raw.id;
  if (!callId) throw new Error(`the run paused on a ${raw.type} without an id, so its decision could not be matched to it`);
  const text = item.arguments ?? (typeof raw.providerData?.arguments === "string" ? raw.providerData.arguments : undefined);
  // Shell, computer and apply-patch calls carry what they would do as an object, not as arguments.
  const args = text !== undefined ? parseArguments(text) : ((raw.action ?? raw.actions ?? raw.operation ?? {}) as Json);
  return { callId, tool: item.name ?? item.toolName ?? raw.type, args, agent: item.agent.name };
}

function parseArguments(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch {
    // The model's arguments are not JSON: the operator sees them as it wrote them.
    return text;
  }
}

function parseResumeToken(requestId: string, resumeToken: string | null): ResumeToken {
  let token: Partial<ResumeToken> | null = null;
  try {
    token = resumeToken ? (JSON.parse(resumeToken) as Partial<ResumeToken>) : null;
  } catch {
    // Not ours: reported below.
  }
  if (token?.framework !== FRAMEWORK || typeof token.runRequestId !== "string" || !token.state) {
    throw new Error(
      `request ${requestId} holds no paused OpenAI Agents run; pass the pauseRequestId that runUntilPause returned (the pause's request, not the run's)`,
    );
  }
  return token as ResumeToken;
}
