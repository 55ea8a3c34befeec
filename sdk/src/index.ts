// The TypeScript SDK for agent services: sessions, requests, trace, and the
// tool guard `gate`, which asks a human before a tool runs and runs it at most
// once with the arguments the human approved; and, for tool servers, the
// verifier of decision receipts.
import { randomUUID } from "node:crypto";
import { TRPCClientError } from "@trpc/client";
import type { ApprovalResult, Decision, Json, Procedure, ProcedureInput, ToolAnnotations } from "./contract.ts";
import { DecisionPush } from "./decision-push.ts";
import { RunDrivenElsewhereError } from "./durable-run.ts";
import { contractCaller } from "./transport.ts";
import { Thread, type ThreadOptions } from "./thread.ts";

export * from "./contract.ts";
export * from "./thread.ts";
export * from "./receipts.ts";
export * from "./durable-run.ts";
export { verifyWebhook, SIGNATURE_HEADER, DELIVERY_HEADER } from "./webhook-signature.ts";

export interface TollgateOptions {
  /** The server's base URL, e.g. http://localhost:3000 */
  url: string;
  /** An agent key (Authorization: Bearer). */
  apiKey: string;
  /** How long one long-poll waits for a decision before asking again (at most 60 s). */
  pollMs?: number;
  /** Retries of a call that failed on the network (not on an error answer). */
  networkRetries?: number;
  /**
   * Names this process, once for everything: its execution claims, the lease
   * of the durable runs it drives and its held connection (whose closing
   * releases those leases). Defaults to a random id per client; never give a
   * new process a dead one's id (its claims would be granted again): it takes
   * the dead one's runs over with `beginRun({ replacing })`.
   */
  replicaId?: string;
  /**
   * Hold one connection on which decisions are pushed the moment they commit
   * (default true); false, or a connection that cannot be made, long-polls.
   */
  push?: boolean;
}

export type GateOutcome<T> =
  | { outcome: "executed"; approvalId: string; result: T; args: unknown; edited: boolean; decision: Decision; alreadyExecuted: boolean }
  | { outcome: "rejected"; approvalId: string; status: "REJECTED" | "EXPIRED"; message?: string; decision: Decision }
  | { outcome: "responded"; approvalId: string; message: string; decision: Decision }
  | { outcome: "canceled"; approvalId: string }
  /** Another replica holds the approval's execution claim and has not reported yet: this one must not run the tool. */
  | { outcome: "claimedElsewhere"; approvalId: string; claimedAt: string; decision: Decision };

/**
 * The tool, run at most once with the approved arguments. The decision carries
 * the signed receipt (`decision.receipt`) a tool server can verify before it acts.
 */
export type RunTool<T> = (args: unknown, decision: Decision) => Promise<T> | T;

export interface GateOptions {
  reason?: string;
  allow?: ("approve" | "reject" | "edit" | "respond")[];
  timeoutMs?: number;
  /** "approve" only where an admin's policy allows it for this call. */
  onTimeout?: "reject" | "cancel" | "approve";
  /** Defaults to a new id per gate call, so a retried call never makes a second approval. */
  idempotencyKey?: string;
  /** The framework's own id of this call: a gate retried with it (in any process) finds the same approval. */
  externalId?: string;
  /** Markdown for the operator, shown before the arguments. */
  summary?: string;
  /** The tool's MCP annotations (destructiveHint, readOnlyHint, ...), shown to the operator. */
  annotations?: ToolAnnotations;
}

/** How often the process driving a durable run renews its lease (the server's lease lasts 30 s). */
const RUN_LEASE_RENEW_MS = 10_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function isNetworkError(error: unknown): boolean {
  // An error answer from the server carries its tRPC code; anything else never reached it.
  return error instanceof TRPCClientError ? error.data?.code === undefined : true;
}

export function createTollgate(options: TollgateOptions) {
  /** One call to the server, typed by the contract; not retried (see withRetry). */
  const call = contractCaller(`${options.url.replace(/\/$/, "")}/api/trpc`, options.apiKey);
  const pollMs = Math.min(options.pollMs ?? 55_000, 60_000);
  const retries = options.networkRetries ?? 5;
  // Approvals whose tool already ran in this process: a decision delivered twice runs nothing twice.
  const executed = new Map<string, Promise<GateOutcome<unknown>>>();
  const replicaId = options.replicaId ?? randomUUID();

  async function withRetry<T>(send: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await send();
      } catch (error) {
        if (attempt >= retries || !isNetworkError(error)) throw error;
        await sleep(Math.min(200 * 2 ** attempt, 5_000));
      }
    }
  }

  // Opened with the client and held: an ask waits for the connection before it
  // is sent (a decision is pushed only to a connection made before it), so one
  // opened by the first ask would hold that ask back; with many agents starting
  // at once, until after all their begins.
  const held = options.push === false ? null : new DecisionPush(options.url.replace(/\/$/, ""), options.apiKey, replicaId);

  /**
   * Waits until the approval is decided, expired or canceled. With the held
   * connection up, the decision arrives pushed; the server is asked directly
   * only when something may have been missed (the connection came up after the
   * approval was asked for, dropped, or stayed quiet for pollMs).
   */
  async function waitForDecision(approvalId: string, askedInEpoch: number | null = null): Promise<ApprovalResult> {
    let epoch = held ? await held.epoch() : null;
    let missedNothing = epoch !== null && epoch === askedInEpoch;
    while (held && epoch !== null) {
      if (!missedNothing) {
        const now = await withRetry(() => call("approval.await", { approvalId, timeoutMs: 0 }));
        if (now.status !== "PENDING") return now;
      }
      const pushed = await held.next(approvalId, pollMs);
      if (pushed) {
        held.settled(approvalId);
        return pushed;
      }
      epoch = await held.epoch();
      missedNothing = false;
    }
    for (;;) {
      const result = await withRetry(() => call("approval.await", { approvalId, timeoutMs: pollMs }));
      if (result.status !== "PENDING") return result;
    }
  }

  function handle(ids: { sessionId: string; taskId: string; requestId: string }) {
    // End-of-request hooks: threads opened on this request end before it completes.
    const threads: Thread[] = [];
    return {
      ...ids,
      /** The task's thread for this request; complete() runs its end-of-request hook first. */
      thread: (threadOptions?: ThreadOptions) => {
        const opened = new Thread({ call, withRetry }, ids.taskId, ids.requestId, threadOptions);
        threads.push(opened);
        return opened;
      },
      complete: async (output?: unknown) => {
        for (const opened of threads) await opened.end();
        return withRetry(() => call("request.complete", { requestId: ids.requestId, output: output as Json }));
      },
      fail: (error: { message: string; code?: string }) => withRetry(() => call("request.fail", { requestId: ids.requestId, error })),
      /**
       * For an agent this request calls that runs with another agent key: send
       * it `{parentRequestId, delegation}` with the call, and it passes both to
       * begin, so its request is a child of this one. Valid 15 minutes unless
       * `ttlSeconds` says otherwise (at most a day).
       */
      delegate: (delegateOptions: { ttlSeconds?: number } = {}) => withRetry(() => call("request.delegate", { requestId: ids.requestId, ...delegateOptions })),
      trace: (events: { type: string; name?: string; data?: unknown }[]) =>
        withRetry(() => call("request.trace", { requestId: ids.requestId, events: events as { type: string; name?: string; data?: Json }[] })),
      /**
       * Asks for approval to run `tool` with `args`, waits for the decision,
       * and runs `run` at most once with the approved (possibly edited) args.
       */
      gate: <T>(tool: string, args: unknown, run: RunTool<T>, gateOptions: GateOptions = {}) =>
        gate(ids.requestId, tool, args, run, gateOptions),
    };
  }

  /**
   * Asks for an approval and waits for its decision, on the held connection
   * when it is up; runs nothing. A decision taken at once (a rule, or the same
   * idempotency key again) comes back without waiting. Without an
   * idempotencyKey one is made, so a retry never asks twice.
   */
  async function ask(input: ProcedureInput<"approval.request">): Promise<ApprovalResult> {
    const withKey = { ...input, idempotencyKey: input.idempotencyKey ?? `ask-${randomUUID()}` };
    // Connected before asking: a decision committed from now on is pushed on this connection.
    const askedInEpoch = held ? await held.epoch() : null;
    const asked = await withRetry(() => call("approval.request", withKey));
    return asked.status === "PENDING" ? waitForDecision(asked.approvalId, askedInEpoch) : asked;
  }

  async function gate<T>(requestId: string, tool: string, args: unknown, run: RunTool<T>, gateOptions: GateOptions): Promise<GateOutcome<T>> {
    const idempotencyKey = gateOptions.idempotencyKey ?? `gate-${randomUUID()}`;
    const result = await ask({
      requestId,
      tool,
      args: args as Json,
      reason: gateOptions.reason,
      allow: gateOptions.allow,
      timeoutMs: gateOptions.timeoutMs,
      onTimeout: gateOptions.onTimeout,
      idempotencyKey,
      externalId: gateOptions.externalId,
      summary: gateOptions.summary,
      annotations: gateOptions.annotations,
    });
    return settle(result, args, run);
  }

  /**
   * Turns a decided approval into what the agent does next; runs the tool at
   * most once: not again in this process (a decision delivered twice), and in
   * no other replica (the server grants the approval's one execution claim).
   */
  async function settle<T>(result: ApprovalResult, proposedArgs: unknown, run: RunTool<T>): Promise<GateOutcome<T>> {
    const { approvalId, decision } = result;
    if (result.status === "CANCELED" || !decision) return { outcome: "canceled", approvalId };
    const mayRun = result.status === "APPROVED" || (result.status === "EXPIRED" && decision.action === "approve");
    if (!mayRun) {
      if (decision.action === "respond") return { outcome: "responded", approvalId, message: decision.message ?? "", decision };
      return { outcome: "rejected", approvalId, status: result.status as "REJECTED" | "EXPIRED", message: decision.message, decision };
    }
    const edited = decision.action === "edit";
    const args = edited ? decision.args : proposedArgs;
    if (result.execution && !executed.has(approvalId)) {
      return { outcome: "executed", approvalId, result: result.execution.result as T, args: result.execution.args, edited, decision, alreadyExecuted: true };
    }
    // Set before the first await, so a decision delivered twice at once claims and runs once.
    let execution = executed.get(approvalId) as Promise<GateOutcome<T>> | undefined;
    if (!execution) {
      execution = claimAndRun(approvalId, decision, edited, args, run);
      executed.set(approvalId, execution);
    }
    return execution;
  }

  async function claimAndRun<T>(approvalId: string, decision: Decision, edited: boolean, args: unknown, run: RunTool<T>): Promise<GateOutcome<T>> {
    const claimKey = `${replicaId}:${approvalId}`;
    const claim = await withRetry(() => call("approval.claimExecution", { approvalId, claimKey }));
    if (!claim.granted) {
      if (!claim.execution) return { outcome: "claimedElsewhere", approvalId, claimedAt: claim.claimedAt, decision };
      return { outcome: "executed", approvalId, result: claim.execution.result as T, args: claim.execution.args, edited, decision, alreadyExecuted: true };
    }
    const value = await run(args, decision);
    try {
      await withRetry(() => call("approval.reportExecution", { approvalId, executedArgs: args as Json, result: (value ?? null) as Json, claimKey }));
    } catch (error) {
      // The tool ran; failing now would invite a retry that runs it again.
      console.warn(`tollgate: approval ${approvalId} ran, but reporting the execution failed: ${(error as Error).message}`);
    }
    return { outcome: "executed", approvalId, result: value, args, edited, decision, alreadyExecuted: false };
  }

  /**
   * Begins the durable run `runId`, or continues it: when the key already has
   * a request in progress under that id (begun by a process that may have
   * died since), the handle is on that request, `continued` is true and
   * `state` is what was kept with `save`. This process holds the run's lease,
   * renewed while it lives, until the request ends; another live process with
   * the same runId gets RunDrivenElsewhereError. A process started in place
   * of one that died passes the dead one's replicaId as `replacing`, to take
   * its run over at once instead of after its lease.
   */
  async function beginRun(input: Omit<ProcedureInput<"run.begin">, "holder">) {
    let begun;
    try {
      begun = await withRetry(() => call("run.begin", { ...input, holder: replicaId }));
    } catch (error) {
      if (error instanceof TRPCClientError && error.data?.code === "CONFLICT") throw new RunDrivenElsewhereError(input.runId, error.message);
      throw error;
    }
    const { runId, continued, state, ...ids } = begun;
    const request = handle(ids);
    let takenOver: RunDrivenElsewhereError | undefined;
    const hold = async (stateToKeep?: string | null) => {
      if (takenOver) throw takenOver;
      try {
        await withRetry(() => call("run.hold", { runId, holder: replicaId, ...(stateToKeep === undefined ? {} : { state: stateToKeep }) }));
      } catch (error) {
        if (error instanceof TRPCClientError && error.data?.code === "CONFLICT") throw (takenOver = new RunDrivenElsewhereError(runId, error.message));
        throw error;
      }
    };
    // Renewed well within the lease; unreferenced, so it never keeps a finished process alive.
    const renewal = setInterval(() => void hold().catch(() => undefined), RUN_LEASE_RENEW_MS);
    renewal.unref();
    const stop = () => clearInterval(renewal);
    return {
      ...request,
      runId,
      continued,
      state,
      /** Keeps what the adapter needs to continue (sealed at rest; forgotten when the request ends). */
      save: (stateToKeep: string | null) => hold(stateToKeep),
      /** Confirms this process still drives the run: throws RunDrivenElsewhereError once another has taken it over. */
      hold: () => hold(),
      complete: async (output?: unknown) => {
        stop();
        return request.complete(output);
      },
      fail: async (error: { message: string; code?: string }) => {
        stop();
        return request.fail(error);
      },
      /** Stops renewing the lease without ending the run (its request stays in progress for the next process). */
      stop,
    };
  }

  return {
    /** One call of the agent API, typed by the contract, retried on network errors. */
    call: <P extends Procedure>(path: P, input: ProcedureInput<P>) => withRetry(() => call(path, input)),
    openSession: (input: ProcedureInput<"session.open"> = {}) => withRetry(() => call("session.open", input)),
    /**
     * Begins a request (an invocation of `agent`). Orchestrators pass their own
     * requestId as `parentRequestId` to the agents they call, so the chain links;
     * an agent with another key needs the caller's `delegation` too
     * (`handle.delegate()`): pass on both as they came.
     */
    begin: async (input: ProcedureInput<"request.begin">) => {
      const withKey = { ...input, idempotencyKey: input.idempotencyKey ?? `begin-${randomUUID()}` };
      return handle(await withRetry(() => call("request.begin", withKey)));
    },
    /** A handle on a request begun elsewhere (e.g. from a webhook). */
    request: handle,
    beginRun: (input: Omit<ProcedureInput<"run.begin">, "holder">) => beginRun(input),
    /** This process's name in execution claims and durable runs' leases. */
    replicaId,
    /** A task's thread for one request; call end() at the end of the request (or use handle.thread). */
    thread: (taskId: string, requestId: string, threadOptions?: ThreadOptions) => new Thread({ call, withRetry }, taskId, requestId, threadOptions),
    ask,
    waitForDecision,
    settle,
    /** Closes the held decision connection (it never keeps the process alive on its own). */
    close: () => held?.close(),
  };
}

export type Tollgate = ReturnType<typeof createTollgate>;
export type RequestHandle = ReturnType<Tollgate["request"]>;
