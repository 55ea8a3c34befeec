// The procedures this SDK calls, with the inputs it sends and the outputs it
// reads: the agent side of the public API (API.md), written out here so the
// package needs nothing from the server. The repository's type check holds the
// server's router to this contract (test/sdk-contract.types.ts).

/** A JSON value, as the server accepts it. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

export type RequestStatus = "RUNNING" | "PAUSED" | "COMPLETED" | "FAILED" | "CANCELED";
export type ApprovalStatus = "PENDING" | "APPROVED" | "REJECTED" | "EXPIRED" | "CANCELED";
export type DecisionAction = "approve" | "reject" | "edit" | "respond";
export type OperatorRole = "ADMIN" | "OPERATOR" | "VIEWER";

export interface Decision {
  action: DecisionAction;
  /** The arguments an operator's edit replaced the proposed ones with. */
  args?: unknown;
  message?: string;
  decidedBy: string;
  decidedAt: string;
  decider?: "operator" | "policy" | "timeout" | "system";
  policyId?: string;
  /** A signed decision receipt (JWS) that a tool server can verify. */
  receipt?: string;
}

/** The gate the server resolved for an approval: which role decides, and what happens on timeout. */
export interface ResolvedGate {
  role: OperatorRole;
  expiresAt: string | null;
  policy: string | null;
  policyId: string | null;
  onTimeout: "reject" | "cancel" | "approve";
  allow: DecisionAction[];
  approvers: number;
}

export interface Execution {
  at: string;
  args?: unknown;
  result?: unknown;
}

/**
 * A tool's MCP annotations (MCP's ToolAnnotations), shown to the operator. Hints
 * only: a missing one counts as MCP's default (destructive, not read-only), and
 * they can make a call look riskier, never safer.
 */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface ApprovalResult {
  approvalId: string;
  status: ApprovalStatus;
  decision?: Decision;
  gate?: ResolvedGate;
  execution?: Execution;
  /** The annotations the request carried. */
  annotations?: ToolAnnotations;
}

export interface ToolCallRecord {
  requestId: string;
  callId: string;
  tool: string;
  args?: unknown;
  result?: unknown;
  at: string;
}

export interface AssembledContext {
  taskId: string;
  sizeBytes: number;
  explicit: { entities: { id: string; name: string; type?: string; data?: unknown; lastActiveAt: string }[] };
  expired: string[];
  recentToolOutputs: { requestId: string; calls: { id: string; name: string }[] }[];
  lookups: { query: string; matches: { id: string; name: string; type?: string; score: number }[] }[];
}

interface ContinuityCommon {
  taskId: string;
  agent: string;
  version: number;
  sizeBytes: number;
  toolCalls: ToolCallRecord[];
}

type StateWrite = { taskId: string; version: number; sizeBytes: number; unchanged: boolean };

/** Each procedure: whether it is a query or a mutation, what the SDK sends, what it reads back. */
export interface Contract {
  "session.open": {
    kind: "mutation";
    input: { sessionId?: string; title?: string; metadata?: Record<string, Json> };
    output: { sessionId: string };
  };
  "request.begin": {
    kind: "mutation";
    input: {
      sessionId: string;
      agent: string;
      kind?: "agent" | "orchestrator";
      taskId?: string;
      parentRequestId?: string;
      /** The token the parent request's key made for this call (request.delegate), when that key is not this one. */
      delegation?: string;
      input?: Json;
      idempotencyKey?: string;
      resumeUrl?: string;
      /** Opaque framework state (a serialised run, a thread id), returned by request.load to whichever process resumes. */
      resumeToken?: string;
      /** The agent framework a new task runs in ("langgraph", "openai-agents", ...), shown in the console. */
      framework?: string;
    };
    output: { sessionId: string; taskId: string; requestId: string };
  };
  "request.delegate": {
    kind: "mutation";
    input: { requestId: string; ttlSeconds?: number };
    /** What the called agent passes to begin: `parentRequestId` and `delegation`. */
    output: { parentRequestId: string; delegation: string; expiresAt: string };
  };
  "request.load": {
    kind: "query";
    input: { requestId: string };
    output: {
      requestId: string;
      sessionId: string;
      taskId: string;
      agent: string;
      status: RequestStatus;
      resumeToken: string | null;
      approvals: (ApprovalResult & { tool: string; externalId: string | null })[];
    };
  };
  "run.begin": {
    kind: "mutation";
    input: {
      /** The application's id of the run (its thread, conversation or job id), scoped to the agent key. */
      runId: string;
      /** The process that drives the run (the client's replicaId). */
      holder: string;
      /**
       * The holder (replicaId) of a process that died, this one started in its
       * place: the run is taken over at once, not after the dead one's lease.
       */
      replacing?: string;
      sessionId: string;
      agent: string;
      kind?: "agent" | "orchestrator";
      taskId?: string;
      parentRequestId?: string;
      delegation?: string;
      input?: Json;
      resumeUrl?: string;
      framework?: string;
    };
    output: { runId: string; sessionId: string; taskId: string; requestId: string; continued: boolean; state: string | null; leaseExpiresAt: string };
  };
  "run.hold": {
    kind: "mutation";
    input: { runId: string; holder: string; state?: string | null };
    output: { runId: string; leaseExpiresAt: string };
  };
  "request.complete": { kind: "mutation"; input: { requestId: string; output?: Json }; output: { requestId: string; status: RequestStatus } };
  "request.fail": {
    kind: "mutation";
    input: { requestId: string; error: { message: string; code?: string } };
    output: { requestId: string; status: RequestStatus };
  };
  "task.cancelAsAgent": {
    kind: "mutation";
    /** Cancels the agent's own task and everything below it: pending approvals end CANCELED. */
    input: { taskId: string; reason?: string };
    output: { taskId: string; status: RequestStatus; canceledRequests: number };
  };
  "request.trace": {
    kind: "mutation";
    input: { requestId: string; events: { type: string; name?: string; data?: Json }[] };
    output: { accepted: number };
  };
  "approval.request": {
    kind: "mutation";
    input: {
      requestId: string;
      tool: string;
      args: Json;
      reason?: string;
      allow?: DecisionAction[];
      timeoutMs?: number;
      onTimeout?: "reject" | "cancel" | "approve";
      idempotencyKey?: string;
      /** The framework's own id of the paused call: asking again under it returns the same approval. */
      externalId?: string;
      /** Markdown for the operator, shown before the arguments. */
      summary?: string;
      /**
       * question: the agent waits for a free-text answer (decision "respond"), not for leave to run a tool.
       * form: for values of the fields `form` describes; the answer is an "edit" whose args are the values.
       */
      kind?: "tool" | "question" | "form";
      /** kind form: a JSON schema of primitive fields (as MCP elicitation sends), at most 50. */
      form?: { [key: string]: Json };
      /** Calls paused together (one framework turn) share a batch; the console shows them as a group. */
      batch?: string;
      /** The tool's MCP annotations (an MCP server's tools/list declares them). */
      annotations?: ToolAnnotations;
      /** The tool as its MCP server lists it: a policy rule with `pinned` matches only while an admin's pin has its hash. */
      toolDefinition?: { name: string; description?: string; annotations?: ToolAnnotations; inputSchema?: { [key: string]: Json } };
    };
    output: ApprovalResult;
  };
  "approval.await": { kind: "query"; input: { approvalId: string; timeoutMs?: number }; output: ApprovalResult };
  "approval.claimExecution": {
    kind: "mutation";
    input: { approvalId: string; claimKey: string };
    output:
      | { approvalId: string; granted: true; claimedAt: string }
      | { approvalId: string; granted: false; claimedAt: string; execution: Execution | null };
  };
  "approval.reportExecution": {
    kind: "mutation";
    input: { approvalId: string; executedArgs: Json; result?: Json; claimKey?: string };
    output: { approvalId: string };
  };
  "approval.reportNotRun": {
    kind: "mutation";
    input: { approvalId: string; reason: string };
    output: { approvalId: string; reason: string };
  };
  "thread.configure": {
    kind: "mutation";
    input: { taskId: string; config: Record<string, unknown>; ownership?: unknown };
    output: { taskId: string };
  };
  "state.load": {
    kind: "query";
    input: { taskId: string };
    output: { taskId: string; version: number; config: Record<string, unknown> | null; state: Record<string, unknown> | null; ownership?: unknown };
  };
  "state.save": {
    kind: "mutation";
    input: { taskId: string; requestId: string; state: Record<string, unknown>; baseVersion?: number };
    output: StateWrite;
  };
  "state.remember": {
    kind: "mutation";
    input: { taskId: string; requestId: string; memory: Record<string, Json>; baseVersion?: number };
    output: StateWrite;
  };
  "continuity.load": {
    kind: "query";
    input: { taskId: string; requestId: string };
    output: ContinuityCommon & { strategy: "restore" | "reference" | null; conversationId: string | null };
  };
  "continuity.record": {
    kind: "mutation";
    input:
      | {
          strategy: "restore";
          taskId: string;
          requestId: string;
          toolCalls: { callId: string; tool: string; args?: Json; result?: Json; at?: string }[];
          keepLast?: number;
        }
      | { strategy: "reference"; taskId: string; requestId: string; conversationId?: string };
    output:
      | (ContinuityCommon & { strategy: "restore"; conversationId: string | null; pruned: number })
      | (ContinuityCommon & { strategy: "reference"; conversationId: string; created: boolean });
  };
  "context.touch": {
    kind: "mutation";
    input: { taskId: string; requestId: string; entities: { id: string; name: string; type?: string; data?: Json }[] };
    output: { taskId: string; touched: number };
  };
  "context.assemble": {
    kind: "mutation";
    input: { taskId: string; lookups?: string[]; recentTurns?: number; inactivityWindowMs?: number; lookupLimit?: number };
    output: AssembledContext;
  };
}

export type Procedure = keyof Contract;
export type ProcedureInput<P extends Procedure> = Contract[P]["input"];
export type ProcedureOutput<P extends Procedure> = Contract[P]["output"];

type Query = { [P in Procedure]: Contract[P]["kind"] extends "query" ? P : never }[Procedure];

/** The queries among the procedures (sent as GET); every other one is a mutation. */
export const QUERIES: ReadonlySet<Procedure> = new Set(["approval.await", "request.load", "state.load", "continuity.load"] satisfies Query[]);

// Every query of the contract is in QUERIES: a new one left out fails the type check here.
const everyQueryListed: Exclude<Query, "approval.await" | "request.load" | "state.load" | "continuity.load"> extends never ? true : false = true;
void everyQueryListed;
