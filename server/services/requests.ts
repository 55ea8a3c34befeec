// Requests and tasks: begin, complete, fail, trace, cancel; the call chain and
// task tree for the console.
import { Prisma } from "../db/generated/client.ts";
import { DomainError, notFound } from "../domain/errors.ts";
import { delegationAllows } from "../domain/delegation.ts";
import { newId } from "../domain/ids.ts";
import { checkUrlLiteral } from "../domain/outbound.ts";
import { ACTIVE_RUN_STATUSES, isActive, planRequestEnding, type RequestEnding, type RunStatus } from "../domain/lifecycle.ts";
import type { AgentPrincipal, OperatorPrincipal } from "../domain/principal.ts";
import { cancelPendingApprovalsOf } from "./approvals/cancel-pending-approvals.ts";
import { gateFactsOf, type GateFactsRow } from "./approvals/gate-facts-cache.ts";
import { lockChain, lockChains, lockPendingApprovals, lockTasks } from "./locks.ts";
import { type Actor } from "./audit.ts";
import { findRequest, findTask, keyAtOrAbove, mayActOnRequest } from "./authority.ts";
import { mergeChanges, noChanges, refreshTaskStatuses, type Changes } from "./cascade.ts";
import type { ServiceDeps, Tx } from "./deps.ts";
import { ATTEMPTS, isUniqueViolation, publishChanges, transact, withRetries } from "./transaction.ts";
import { refuseMixedScripts } from "./workspaces/name-scripts.ts";

const json = (value: unknown) => (value === undefined ? Prisma.DbNull : (value as Prisma.InputJsonValue));
const agentActor = (agent: AgentPrincipal): Actor => ({ type: "agent", id: agent.agentKeyId, label: agent.keyName });

export interface BeginRequestInput {
  sessionId: string;
  agent: string;
  kind?: "agent" | "orchestrator";
  taskId?: string;
  parentRequestId?: string;
  /** request.delegate's token from the key of another key's parent request. */
  delegation?: string;
  input?: unknown;
  idempotencyKey?: string;
  resumeUrl?: string;
  /** Opaque framework state, kept for whichever process resumes the request (request.load). */
  resumeToken?: string;
  /** The agent framework a new task runs in, for the console. */
  framework?: string;
  /** The agent's W3C trace context: kept with the request, sent on with its decision webhook. */
  traceparent?: string;
}

export interface BeginRequestResult {
  sessionId: string;
  taskId: string;
  requestId: string;
}

export async function beginRequest(deps: ServiceDeps, agent: AgentPrincipal, input: BeginRequestInput): Promise<BeginRequestResult> {
  await refuseMixedScripts(deps, agent.workspaceId, "agent", input.agent);
  if (input.resumeUrl) {
    // A literal private address is refused now; a name is checked on every address it resolves to when sent to.
    const verdict = checkUrlLiteral(input.resumeUrl, deps.outbound.allow);
    if (!verdict.allowed) throw new DomainError("BAD_INPUT", `resumeUrl is refused: ${verdict.reason}`, { field: "resumeUrl" });
  }
  try {
    const begun = await beginRequestInOneCall(deps, agent, input);
    if (begun) return begun;
  } catch (error) {
    // A concurrent retry with the same key committed first; the general path answers with its request.
    if (!(input.idempotencyKey && isUniqueViolation(error))) throw error;
  }
  return beginRequestInSteps(deps, agent, input);
}

interface BegunInOneCall {
  outcome: "begun" | "elsewhere";
  begun_task_id: string | null;
  begun_task_status: RunStatus | null;
  begun_task_changed: boolean;
}

/**
 * The common case in one database round trip: every check passes and, for a
 * follow-on request, the key began the task or one above it. tollgate_begin_request
 * (its migration, 20261124100000_engine_functions, says what each statement
 * guarantees) writes the task, the request, its trace and the task's status, or
 * nothing. Null when the general path must answer: a key trusted by name, an
 * idempotency key already used, and every refusal.
 *
 * The same statement reads the new request's gate facts (tollgate_gate_facts,
 * after the begin: it names the request only once begun), and the node
 * remembers them (GateFactsCache), so that the request's first
 * approval.request is one statement: its write, which checks them behind the
 * chain's lock.
 */
async function beginRequestInOneCall(deps: ServiceDeps, agent: AgentPrincipal, input: BeginRequestInput): Promise<BeginRequestResult | null> {
  const requestId = newId("req");
  const kind = input.kind === "orchestrator" ? "ORCHESTRATOR" : "AGENT";
  const [row] = await withRetries(() =>
    deps.sql.query<BegunInOneCall & Partial<GateFactsRow>>(Prisma.sql`
      SELECT b.outcome, b.task_id AS begun_task_id, b.task_status AS begun_task_status, b.task_changed AS begun_task_changed, f.*
      FROM tollgate_begin_request(${agent.workspaceId}, ${agent.agentKeyId}, ${input.sessionId}, ${input.agent},
        ${kind}::"TaskKind", ${input.taskId ?? null}, ${input.parentRequestId ?? null},
        ${input.input === undefined ? null : JSON.stringify(input.input)}::json, ${input.idempotencyKey ?? null},
        ${input.resumeUrl ?? null}, ${input.resumeToken ?? null}, ${input.framework ?? null}, ${input.traceparent ?? null}, ${requestId}, ${newId("tsk")}, ${deps.now()}::timestamp(3)) b
      LEFT JOIN LATERAL tollgate_gate_facts(${agent.workspaceId}, CASE WHEN b.outcome = 'begun' THEN ${requestId}::text END, ${agent.agentKeyId}) f ON true`),
  );
  if (!row || row.outcome !== "begun") return null;
  const { workspaceId } = agent;
  const taskId = row.begun_task_id!;
  const facts = row.fingerprint ? gateFactsOf(agent, row as GateFactsRow) : null;
  if (facts) deps.gateFacts.remember(workspaceId, requestId, agent.agentKeyId, { ...facts, resumeUrl: input.resumeUrl ?? null });
  const changes = noChanges();
  changes.requests.push({ workspaceId, requestId, taskId, sessionId: input.sessionId, status: "RUNNING" });
  if (row.begun_task_changed) changes.tasks.push({ workspaceId, taskId, sessionId: input.sessionId, status: row.begun_task_status! });
  publishChanges(deps, changes);
  return { sessionId: input.sessionId, taskId, requestId };
}

/** The general path: every case, in several statements in one transaction. */
async function beginRequestInSteps(deps: ServiceDeps, agent: AgentPrincipal, input: BeginRequestInput): Promise<BeginRequestResult> {
  const { workspaceId } = agent;
  if (input.idempotencyKey) {
    const existing = await findByIdempotencyKey(deps, agent, input.idempotencyKey, input.sessionId);
    if (existing) return existing;
  }
  const now = deps.now();
  try {
    const { result, changes } = await transact(deps, async (tx) => {
      const changes = noChanges();
      const session = await tx.session.findFirst({ where: { id: input.sessionId, workspaceId } });
      if (!session) throw notFound("session", input.sessionId);
      if (session.status === "CLOSED") {
        throw new DomainError("PRECONDITION_FAILED", `session ${session.id} is closed; open a new session for new work`);
      }
      const parent = input.parentRequestId ? await loadParent(deps, tx, agent, input.parentRequestId, input.delegation, session.id) : null;
      const taskId = input.taskId
        ? await continueTask(tx, agent, input.taskId, session.id, input.agent)
        : await createTask(tx, agent, session.id, input, parent?.taskId ?? null, now);
      const requestId = newId("req");
      await tx.request.create({
        data: {
          id: requestId,
          workspaceId,
          sessionId: session.id,
          taskId,
          parentRequestId: parent?.id ?? null,
          agentKeyId: agent.agentKeyId,
          input: json(input.input),
          idempotencyKey: input.idempotencyKey ?? null,
          resumeUrl: input.resumeUrl ?? null,
          resumeToken: input.resumeToken ?? null,
          traceparent: input.traceparent ?? null,
          createdAt: now,
        },
      });
      await tx.traceEvent.create({
        data: {
          workspaceId,
          sessionId: session.id,
          taskId,
          requestId,
          category: "INTERACTION",
          type: "invocation",
          name: input.agent,
          data: json({ input: input.input ?? null, parentRequestId: parent?.id ?? null }),
          createdAt: now,
        },
      });
      changes.requests.push({ workspaceId, requestId, taskId, sessionId: session.id, status: "RUNNING" });
      mergeChanges(changes, { tasks: await refreshTaskStatuses(tx, [taskId]) });
      return { result: { sessionId: session.id, taskId, requestId }, changes };
    });
    publishChanges(deps, changes);
    return result;
  } catch (error) {
    // A concurrent retry with the same key committed first: answer with its request.
    if (input.idempotencyKey && isUniqueViolation(error)) {
      const existing = await findByIdempotencyKey(deps, agent, input.idempotencyKey, input.sessionId);
      if (existing) return existing;
    }
    throw error;
  }
}

async function findByIdempotencyKey(deps: ServiceDeps, agent: AgentPrincipal, key: string, sessionId: string) {
  const existing = await deps.prisma.request.findUnique({ where: { agentKeyId_idempotencyKey: { agentKeyId: agent.agentKeyId, idempotencyKey: key } } });
  if (!existing) return null;
  if (existing.sessionId !== sessionId) {
    throw new DomainError(
      "CONFLICT",
      `idempotencyKey "${key}" was already used for request ${existing.id} in session ${existing.sessionId}; use a new key for a different request`,
    );
  }
  return { sessionId: existing.sessionId, taskId: existing.taskId, requestId: existing.id };
}

async function loadParent(deps: ServiceDeps, tx: Tx, agent: AgentPrincipal, parentRequestId: string, delegation: string | undefined, sessionId: string) {
  // Locked so that a concurrent cancel or completion of the parent is seen.
  // A key names as its caller a request it may act on, or another key's request
  // whose key handed it a delegation token (request.delegate): a call chain
  // crosses services, each with its own key, but a key that was not called
  // cannot attach work under another's request and pause it. Either way the new
  // work belongs to the parent's key too, and the caller gains nothing over the
  // parent. Without the token it is as if the request did not exist.
  const { workspaceId } = agent;
  const delegated = delegation !== undefined && delegationAllows(deps.delegationKey, delegation, { workspaceId, requestId: parentRequestId }, deps.now());
  let parent = await lockChain(tx, workspaceId, parentRequestId, delegated ? null : agent);
  if (!parent && !delegated) {
    const workspace = await tx.workspace.findUniqueOrThrow({ where: { id: workspaceId }, select: { allowUndelegatedChildren: true } });
    if (workspace.allowUndelegatedChildren) parent = await lockChain(tx, workspaceId, parentRequestId, null);
  }
  if (!parent) throw notFound("parent request", parentRequestId);
  if (parent.sessionId !== sessionId) {
    throw new DomainError(
      "BAD_INPUT",
      `parentRequestId ${parentRequestId} belongs to session ${parent.sessionId}, not ${sessionId}; a call chain stays inside one session`,
    );
  }
  if (!isActive(parent.status)) {
    throw new DomainError(
      "PRECONDITION_FAILED",
      `parent request ${parentRequestId} already ended as ${parent.status}; only a running request can invoke another`,
    );
  }
  return parent;
}

/** A follow-on request needs authority over the task, whatever parent it names. */
async function continueTask(tx: Tx, caller: AgentPrincipal, taskId: string, sessionId: string, agent: string): Promise<string> {
  // Locked for update, after the parent's chain (lock order): a concurrent
  // cancel is seen, and a second follow-on in this task waits its turn rather
  // than sharing the lock and deadlocking when both raise it to update.
  const task = await findTask(tx, caller, taskId, { lock: true });
  if (!task) throw notFound("task", taskId);
  if (task.sessionId !== sessionId) {
    throw new DomainError("BAD_INPUT", `task ${taskId} belongs to session ${task.sessionId}, not ${sessionId}`);
  }
  if (task.agent !== agent) {
    throw new DomainError("BAD_INPUT", `task ${taskId} is the task of agent "${task.agent}"; "${agent}" cannot continue it`);
  }
  if (task.status === "CANCELED") {
    throw new DomainError("PRECONDITION_FAILED", `task ${taskId} was canceled; start a new task instead`);
  }
  return task.id;
}

async function createTask(tx: Tx, creator: AgentPrincipal, sessionId: string, input: BeginRequestInput, parentTaskId: string | null, now: Date) {
  const taskId = newId("tsk");
  await tx.task.create({
    data: {
      id: taskId,
      workspaceId: creator.workspaceId,
      sessionId,
      parentTaskId,
      agent: input.agent,
      kind: input.kind === "orchestrator" ? "ORCHESTRATOR" : "AGENT",
      agentKeyId: creator.agentKeyId,
      framework: input.framework ?? null,
      createdAt: now,
    },
  });
  return taskId;
}

export interface EndRequestResult {
  requestId: string;
  status: RunStatus;
}

/** Completes or fails a request (agents), with its output or error recorded. */
export async function endRequest(
  deps: ServiceDeps,
  agent: AgentPrincipal,
  requestId: string,
  ending: Exclude<RequestEnding, "cancel">,
  payload: { output?: unknown; error?: { message: string; code?: string } },
): Promise<EndRequestResult> {
  const ended = await endRunningRequestInOneCall(deps, agent, requestId, ending, payload);
  return ended ?? endRequestInSteps(deps, agent, requestId, ending, payload);
}

interface EndedInOneCall {
  outcome: "ended" | "elsewhere" | "not_found";
  request_status: RunStatus | null;
  session_id: string | null;
  task_id: string | null;
  task_status: RunStatus | null;
  task_changed: boolean;
}

/**
 * The common case in one database round trip: a running request ended by the
 * key that began it (or began a request above it). tollgate_end_request (its
 * migration, 20261124100000_engine_functions, says what each statement
 * guarantees) locks the chain, ends the request, traces it and re-derives the
 * task's status in one statement. Null when the request needs the general path:
 * a key trusted by name, a paused request, or one that already ended.
 */
async function endRunningRequestInOneCall(
  deps: ServiceDeps,
  agent: AgentPrincipal,
  requestId: string,
  ending: Exclude<RequestEnding, "cancel">,
  payload: { output?: unknown; error?: { message: string; code?: string } },
): Promise<EndRequestResult | null> {
  const status: RunStatus = ending === "complete" ? "COMPLETED" : "FAILED";
  const output = ending === "complete" && payload.output !== undefined ? JSON.stringify(payload.output) : null;
  const error = ending === "fail" && payload.error !== undefined ? JSON.stringify(payload.error) : null;
  const [row] = await withRetries(() =>
    deps.sql.query<EndedInOneCall>(Prisma.sql`
      SELECT * FROM tollgate_end_request(${agent.workspaceId}, ${requestId}, ${agent.agentKeyId},
        ${status}::"RunStatus", ${output}::json, ${error}::jsonb, ${deps.now()}::timestamp(3))`),
  );
  if (!row || row.outcome !== "ended") return null;
  const { workspaceId } = agent;
  const changes = noChanges();
  changes.requests.push({ workspaceId, requestId, taskId: row.task_id!, sessionId: row.session_id!, status });
  if (row.task_changed) changes.tasks.push({ workspaceId, taskId: row.task_id!, sessionId: row.session_id!, status: row.task_status! });
  publishChanges(deps, changes);
  return { requestId, status };
}

/** The general path: every case, in several statements in one transaction. */
async function endRequestInSteps(
  deps: ServiceDeps,
  agent: AgentPrincipal,
  requestId: string,
  ending: Exclude<RequestEnding, "cancel">,
  payload: { output?: unknown; error?: { message: string; code?: string } },
): Promise<EndRequestResult> {
  const now = deps.now();
  const { result, changes } = await transact(deps, async (tx) => {
    const changes = noChanges();
    // Locked first: an approval requested concurrently either committed before
    // (and is read below) or waits and then finds the request ended.
    const request = await lockChain(tx, agent.workspaceId, requestId, agent);
    if (!request) throw notFound("request", requestId);
    // Its pending approvals, locked as they are read (lock order step 2).
    const pending = await lockPendingApprovals(tx, [requestId]);
    const plan = planRequestEnding({ requestId, status: request.status, pendingApprovalIds: pending }, ending);
    if (plan === "unchanged") return { result: { requestId, status: request.status }, changes };
    if (pending.length > 0) {
      // A failing request's own pending approvals can no longer be acted on.
      // Canceling them appends to the audit chain (step 4), so every task this
      // ending can change, the chain's, is locked first (step 3).
      await lockTasks(tx, request.chainTaskIds);
      mergeChanges(changes, await cancelPendingApprovalsOf(deps, tx, [requestId], agentActor(agent), now, "the request failed"));
    }
    // Still active: canceling its own approvals above may have moved it from
    // PAUSED back to RUNNING, and the row lock rules out anyone else.
    const updated = await tx.request.updateMany({
      where: { id: requestId, status: { in: [...ACTIVE_RUN_STATUSES] } },
      data: {
        status: plan,
        endedAt: now,
        output: ending === "complete" ? json(payload.output) : undefined,
        error: ending === "fail" ? json(payload.error) : undefined,
      },
    });
    if (updated.count === 0) throw new DomainError("CONFLICT", `request ${requestId} changed while ending it; read it again and retry`);
    await tx.traceEvent.create({
      data: {
        workspaceId: agent.workspaceId,
        sessionId: request.sessionId,
        taskId: request.taskId,
        requestId,
        category: "INTERACTION",
        type: ending === "complete" ? "response" : "error",
        data: json(ending === "complete" ? { output: payload.output ?? null } : { error: payload.error }),
        createdAt: now,
      },
    });
    changes.requests.push({ workspaceId: agent.workspaceId, requestId, taskId: request.taskId, sessionId: request.sessionId, status: plan });
    mergeChanges(changes, { tasks: await refreshTaskStatuses(tx, [request.taskId]) });
    return { result: { requestId, status: plan }, changes };
  });
  publishChanges(deps, changes);
  return result;
}

export interface TraceEventInput {
  type: string;
  name?: string;
  data?: unknown;
}

const INTERACTION_TYPES = new Set(["invocation", "response", "message", "error"]);

/** Appends trace events to a request's task, in one statement. */
export async function traceRequest(deps: ServiceDeps, agent: AgentPrincipal, requestId: string, events: TraceEventInput[]) {
  return (await traceInOneStatement(deps, agent, requestId, events)) ?? traceInSteps(deps, agent, requestId, events);
}

/**
 * Writes the events of one request, sent as one JSON array whatever the
 * batch's size (one plan, one parameter, no per-element escaping), with the
 * request's ids read in the same statement; `authority` is the condition on
 * the request row `r` the writing key must meet. An event's data is taken with
 * `->`, so JSON null stays JSON null and only an absent `data` is SQL NULL.
 * Returns the rows written.
 */
function insertTraceEvents(deps: ServiceDeps, workspaceId: string, requestId: string, events: TraceEventInput[], authority: Prisma.Sql): Promise<number> {
  const rows = JSON.stringify(
    events.map((event) => ({ category: INTERACTION_TYPES.has(event.type) ? "INTERACTION" : "EXECUTION", type: event.type, name: event.name, data: event.data })),
  );
  return deps.prisma.$executeRaw`
    INSERT INTO "TraceEvent" ("workspaceId", "sessionId", "taskId", "requestId", category, type, name, data, "createdAt")
    SELECT r."workspaceId", r."sessionId", r."taskId", r.id, (e.value->>'category')::"TraceCategory", e.value->>'type', e.value->>'name', e.value->'data', ${deps.now()}
    FROM "Request" r
    CROSS JOIN json_array_elements(${rows}::json) WITH ORDINALITY AS e(value, position)
    WHERE r.id = ${requestId} AND r."workspaceId" = ${workspaceId} AND ${authority}
    ORDER BY e.position`;
}

/**
 * The common case in one statement: the key's authority over the request is
 * checked by lineage (the key began it or a request above it) in the INSERT
 * that writes the events. Null when no row was written: an unknown request, or
 * a key trusted by name, which the general path decides.
 */
async function traceInOneStatement(deps: ServiceDeps, agent: AgentPrincipal, requestId: string, events: TraceEventInput[]): Promise<{ accepted: number } | null> {
  const written = await insertTraceEvents(deps, agent.workspaceId, requestId, events, keyAtOrAbove("Request", "r", agent.agentKeyId));
  return written > 0 ? { accepted: written } : null;
}

/** The general path: the request and the key's authority read first (trust by name included), then the events written. */
async function traceInSteps(deps: ServiceDeps, agent: AgentPrincipal, requestId: string, events: TraceEventInput[]) {
  const request = await findRequest(deps.prisma, agent.workspaceId, requestId, agent);
  if (!request) throw notFound("request", requestId);
  return { accepted: await insertTraceEvents(deps, agent.workspaceId, requestId, events, Prisma.sql`true`) };
}

/**
 * Cancels a task, every task below it, their active requests and every request
 * they invoked, and all pending approvals on those requests. An operator may
 * cancel any task of the workspace; an agent key one it has authority over.
 */
export async function cancelTask(deps: ServiceDeps, by: OperatorPrincipal | AgentPrincipal, taskId: string, reason?: string) {
  // Started over while it finds latecomers; the last attempt takes their locks out of order.
  const { result, changes } = await withRetries(
    (tries) => cancelTaskInLockOrder(deps, by, taskId, reason, tries === ATTEMPTS),
    (error) => error instanceof LatecomersFound,
  );
  publishChanges(deps, changes);
  return result;
}

/** Requests begun in the task between the cancel's first read and its lock on the task: it starts over and reads them first. */
class LatecomersFound extends Error {
  constructor() {
    super("requests began in the task while it was being canceled; the cancel starts over");
  }
}

function cancelTaskInLockOrder(deps: ServiceDeps, by: OperatorPrincipal | AgentPrincipal, taskId: string, reason: string | undefined, lastAttempt: boolean) {
  const { workspaceId } = by;
  const actor: Actor = by.kind === "agent" ? agentActor(by) : { type: "operator", id: by.operatorId, label: by.email };
  const now = deps.now();
  return transact(deps, async (tx) => {
    const changes = noChanges();
    const task = by.kind === "agent" ? await findTask(tx, by, taskId) : await tx.task.findFirst({ where: { id: taskId, workspaceId } });
    if (!task) throw notFound("task", taskId);
    if (task.status === "CANCELED") return { result: { taskId, status: "CANCELED" as RunStatus, canceledRequests: 0 }, changes };
    const taskIds = (
      await tx.$queryRaw<{ id: string }[]>`
        WITH RECURSIVE subtree AS (
          SELECT id FROM "Task" WHERE id = ${taskId}
          UNION SELECT t.id FROM "Task" t JOIN subtree s ON t."parentTaskId" = s.id
        ) SELECT id FROM subtree`
    ).map((row) => row.id);
    // In the lock order (locks.ts): the active requests' chains, their pending
    // approvals, then every task this can change. With the subtree's tasks
    // locked no new request begins in them; one begun between the read above
    // and that lock is found by the second read below, and the cancel starts
    // over, so that its chain is locked before the tasks.
    const activeIn = async (exclude: string[]) =>
      (
        await tx.$queryRaw<{ id: string }[]>`
          WITH RECURSIVE calls AS (
            SELECT id FROM "Request" WHERE "taskId" = ANY(${taskIds}::text[]) AND status IN ('RUNNING', 'PAUSED')
            UNION SELECT r.id FROM "Request" r JOIN calls c ON r."parentRequestId" = c.id
          )
          SELECT id FROM calls WHERE NOT (id = ANY(${exclude}::text[]))`
      ).map((row) => row.id);
    const lockedIds = await activeIn([]);
    const chains = await lockChains(tx, lockedIds);
    await lockPendingApprovals(tx, lockedIds);
    await lockTasks(tx, [...taskIds, ...chains.map((row) => row.taskId)]);
    const latecomers = await activeIn(lockedIds);
    if (latecomers.length > 0) {
      if (!lastAttempt) throw new LatecomersFound();
      // Requests keep beginning in the task: their chains are locked out of
      // order (a deadlock this causes is detected, and the transaction retried).
      const more = await lockChains(tx, latecomers);
      await lockTasks(tx, more.map((row) => row.taskId));
      lockedIds.push(...latecomers);
    }
    mergeChanges(changes, await cancelPendingApprovalsOf(deps, tx, lockedIds, actor, now, reason ?? `task ${taskId} was canceled`));
    const requests = await tx.$queryRaw<{ id: string; taskId: string; sessionId: string }[]>`
      UPDATE "Request" SET status = 'CANCELED', "endedAt" = ${now}, "updatedAt" = ${now}
      WHERE id = ANY(${lockedIds}::text[]) AND status IN ('RUNNING', 'PAUSED')
      RETURNING id, "taskId", "sessionId"`;
    const requestIds = requests.map((request) => request.id);
    for (const request of requests) {
      changes.requests.push({ workspaceId, requestId: request.id, taskId: request.taskId, sessionId: request.sessionId, status: "CANCELED" });
    }
    // Only work still under way is canceled: a task that had completed or failed keeps saying so.
    const unfinished = { id: { in: taskIds }, status: { in: ["RUNNING", "PAUSED"] as RunStatus[] } };
    const canceledTasks = await tx.task.findMany({ where: unfinished, select: { id: true, sessionId: true } });
    await tx.task.updateMany({ where: unfinished, data: { status: "CANCELED" } });
    for (const canceled of canceledTasks) changes.tasks.push({ workspaceId, taskId: canceled.id, sessionId: canceled.sessionId, status: "CANCELED" });
    // Tasks outside the subtree whose requests were waiting on the canceled ones resume.
    const others = new Set(changes.requests.map((change) => change.taskId).filter((id) => !taskIds.includes(id)));
    mergeChanges(changes, { tasks: await refreshTaskStatuses(tx, others) });
    await deps.audit.append(tx, workspaceId, { actor, action: "task.canceled", subjectType: "task", subjectId: taskId, data: { reason: reason ?? null, tasks: taskIds.length, requests: requestIds.length } }, now);
    return { result: { taskId, status: "CANCELED" as RunStatus, canceledRequests: requestIds.length }, changes };
  });
}
