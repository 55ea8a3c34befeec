// A task's thread: its configuration and ownership rules, and its versioned
// agent state (save with optimistic concurrency, memory writes, history, diffs).
// Every write runs in one transaction with its audit entry; state:saved is
// published after the commit.
import { Prisma } from "../db/generated/client.ts";
import { DomainError, notFound } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import { jsonSize, LIMITS } from "../domain/json.ts";
import { isActive, type RunStatus } from "../domain/lifecycle.ts";
import { mayActOn } from "../domain/authority.ts";
import type { AgentPrincipal } from "../domain/principal.ts";
import { parseThreadConfig, type ThreadConfig } from "../domain/thread/config.ts";
import { diffParsedStates, summarizeDiff, topLevelChanges, type KeyChangeSummary, type Operation, type StateObject } from "../domain/thread/diff.ts";
import {
  annotateOwners,
  checkStateWrite,
  ownershipOf,
  parseOwnershipRules,
  type KeyOwnership,
  type OwnershipRules,
  type WriterKind,
} from "../domain/thread/ownership.ts";
import { type Actor } from "./audit.ts";
import { findTask, keyAtOrAbove, parseJsonColumn } from "./authority.ts";
import type { ServiceDeps, Tx } from "./deps.ts";
import { isUniqueViolation, transact } from "./transaction.ts";

const agentActor = (agent: AgentPrincipal): Actor => ({ type: "agent", id: agent.agentKeyId, label: agent.keyName });

// ---- Configuration ----------------------------------------------------------

export interface ConfigureThreadInput {
  taskId: string;
  config: unknown;
  /** Omitted: the thread keeps its rules. null: back to the built-in convention only. */
  ownership?: unknown;
}

/** Replaces the thread's config (and its ownership rules when given). */
export async function configureThread(deps: ServiceDeps, agent: AgentPrincipal, input: ConfigureThreadInput): Promise<{ taskId: string }> {
  const config = parseThreadConfig(input.config);
  const ownership = input.ownership === undefined || input.ownership === null ? input.ownership : parseOwnership(input.ownership);
  const now = deps.now();
  await transact(deps, async (tx) => {
    const task = await findTask(tx, agent, input.taskId);
    if (!task) throw notFound("task", input.taskId);
    const ownershipData = ownership === undefined ? undefined : ownership === null ? Prisma.DbNull : (ownership as Prisma.InputJsonValue);
    await tx.threadConfig.upsert({
      where: { taskId: task.id },
      create: { taskId: task.id, workspaceId: agent.workspaceId, config: config as Prisma.InputJsonValue, ownership: ownershipData ?? Prisma.DbNull, updatedAt: now },
      update: { config: config as Prisma.InputJsonValue, ...(ownershipData === undefined ? {} : { ownership: ownershipData }), updatedAt: now },
    });
    await deps.audit.append(tx,
      agent.workspaceId,
      {
        actor: agentActor(agent),
        action: "thread.configured",
        subjectType: "task",
        subjectId: task.id,
        data: { config, ...(ownership === undefined ? {} : { ownership }) },
      },
      now,
    );
  });
  return { taskId: input.taskId };
}

function parseOwnership(value: unknown): OwnershipRules {
  const size = jsonSize(value);
  if (size > LIMITS.configBytes) {
    throw new DomainError("PAYLOAD_TOO_LARGE", `ownership rules are ${size} bytes, over the ${LIMITS.configBytes}-byte limit; use prefixes instead of one rule per key`, {
      field: "ownership",
    });
  }
  return parseOwnershipRules(value);
}

export async function getThread(deps: ServiceDeps, workspaceId: string, taskId: string) {
  const task = await deps.prisma.task.findFirst({
    where: { id: taskId, workspaceId },
    select: { id: true, agent: true, kind: true, config: { select: { config: true, ownership: true, updatedAt: true } } },
  });
  if (!task) throw notFound("task", taskId);
  return {
    taskId: task.id,
    agent: task.agent,
    kind: task.kind,
    config: (task.config?.config ?? null) as ThreadConfig | null,
    ownership: (task.config?.ownership ?? null) as OwnershipRules | null,
    updatedAt: task.config?.updatedAt.toISOString() ?? null,
  };
}

// ---- Loading ----------------------------------------------------------------

export interface LoadedState {
  taskId: string;
  /** 0 while nothing was saved. */
  version: number;
  config: ThreadConfig | null;
  ownership: OwnershipRules | null;
  state: StateObject | null;
}

export async function loadState(deps: ServiceDeps, agent: AgentPrincipal, taskId: string): Promise<LoadedState> {
  const [task, latest] = await Promise.all([findTask(deps.prisma, agent, taskId), readLatest(deps.prisma, taskId)]);
  if (!task) throw notFound("task", taskId);
  return {
    taskId: task.id,
    version: latest?.version ?? 0,
    config: (task.config ?? null) as ThreadConfig | null,
    ownership: (task.ownership ?? null) as OwnershipRules | null,
    state: latest?.state ?? null,
  };
}

/**
 * The latest version, read as text and parsed here: for large states this is
 * several times faster than letting the driver and Prisma convert the value.
 */
async function readLatest(db: Tx, taskId: string): Promise<{ version: number; state: StateObject } | null> {
  const rows = await db.$queryRaw<{ version: number; state: string }[]>`
    SELECT version, state::text AS state FROM "AgentStateVersion" WHERE "taskId" = ${taskId} ORDER BY version DESC LIMIT 1`;
  const row = rows[0];
  return row ? { version: row.version, state: JSON.parse(row.state) as StateObject } : null;
}

// ---- Saving -----------------------------------------------------------------

export interface SaveStateInput {
  taskId: string;
  requestId: string;
  state: StateObject;
  baseVersion?: number;
}

export interface MemoryInput {
  taskId: string;
  requestId: string;
  /** MEMORY-owned keys to set; null removes the key. */
  memory: Record<string, unknown>;
  baseVersion?: number;
}

export interface SaveStateResult {
  taskId: string;
  version: number;
  sizeBytes: number;
  /** True when the state equalled the latest version: nothing new was stored. */
  unchanged: boolean;
}

/** An agent's or orchestrator's save of the whole state, checked against the thread's ownership rules. */
export async function saveState(deps: ServiceDeps, agent: AgentPrincipal, input: SaveStateInput): Promise<SaveStateResult> {
  if (!isPlainObject(input.state)) {
    throw new DomainError("BAD_INPUT", "state must be a JSON object of top-level keys, e.g. {\"notes\": []}", { field: "state" });
  }
  return writeVersion(deps, agent, input, (_previous, _rules, writer) => ({ next: input.state, writer }));
}

/**
 * The memory operations: sets or removes MEMORY-owned keys on top of the latest
 * version, as writer "memory". Any other key is refused, naming its owner.
 */
export async function rememberState(deps: ServiceDeps, agent: AgentPrincipal, input: MemoryInput): Promise<SaveStateResult> {
  const keys = Object.keys(input.memory);
  if (keys.length === 0) throw new DomainError("BAD_INPUT", "memory is empty; give at least one MEMORY key to set (or null to remove it)", { field: "memory" });
  return writeVersion(deps, agent, input, (previous, rules) => {
    const next: StateObject = { ...(previous ?? {}) };
    for (const key of keys.sort()) {
      const { owner } = ownershipOf(rules, key);
      if (owner !== "MEMORY") {
        throw new DomainError(
          "FORBIDDEN",
          `key "${key}" is owned by ${owner}; the memory API writes MEMORY keys only, so save it with state.save (or declare it MEMORY in the thread's ownership rules)`,
          { field: `memory.${key}`, key, owner, writer: "memory" },
        );
      }
      const value = input.memory[key];
      if (value === null || value === undefined) delete next[key];
      else next[key] = value;
    }
    return { next, writer: "memory" };
  });
}

/** The value's JSON text, refused when over the state size limit. */
function stateText(value: unknown, field: string): { text: string; sizeBytes: number } {
  const text = JSON.stringify(value);
  const sizeBytes = Buffer.byteLength(text, "utf8");
  if (sizeBytes > LIMITS.stateBytes) {
    throw new DomainError(
      "PAYLOAD_TOO_LARGE",
      `${field === "state" ? "the state" : "the state after this memory write"} is ${sizeBytes} bytes, over the ${LIMITS.stateBytes}-byte limit; keep large data out of thread state`,
      { field, size: sizeBytes, limit: LIMITS.stateBytes },
    );
  }
  return { text, sizeBytes };
}

type BuildNext = (previous: StateObject | null, rules: OwnershipRules | null, writer: WriterKind) => { next: StateObject; writer: WriterKind };

function isPlainObject(value: unknown): value is StateObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

interface LockedThread {
  config: unknown;
  ownership: unknown;
  sessionId: string;
}

/**
 * The one write path for a new state version: lock the thread's config row (so
 * saves of one task are serialised and baseVersion checks are exact), check the
 * writing request, the base version and ownership, then insert the version.
 * Versions are append-only and carry the request that wrote them, so they are
 * their own record; the audit log keeps decisions and configuration changes,
 * and no save waits on its lock. An unchanged state stores nothing.
 */
async function writeVersion(
  deps: ServiceDeps,
  agent: AgentPrincipal,
  input: { taskId: string; requestId: string; baseVersion?: number },
  build: BuildNext,
): Promise<SaveStateResult> {
  const { workspaceId } = agent;
  const now = deps.now();
  let saved: { sessionId: string; version: number } | null = null;
  let result: SaveStateResult | undefined;
  for (let attempt = 1; result === undefined; attempt++) {
    try {
      result = await transact(deps, async (tx) => {
        saved = null;
        const thread = await lockThread(tx, agent, input.taskId, input.requestId);
        // After a collision, read again behind the lock we now hold: that read is current.
        const latest = attempt === 1 ? thread.latest : await readLatest(tx, input.taskId);
        const current = latest?.version ?? 0;
        const rules = (thread.ownership ?? null) as OwnershipRules | null;
        const previous = latest?.state ?? null;
        const { next, writer } = build(previous, rules, thread.writer);
        if (input.baseVersion !== undefined && input.baseVersion !== current) {
          // A retry of a save that did commit (its answer was lost) finds its own
          // state on top: nothing would be lost by it, so it is answered, not refused.
          if (latest && topLevelChanges(previous, next).length === 0) {
            return { taskId: input.taskId, version: current, sizeBytes: stateText(next, "state").sizeBytes, unchanged: true };
          }
          throw new DomainError(
            "CONFLICT",
            `the state of task ${input.taskId} is at version ${current}, but this save is based on version ${input.baseVersion}; load version ${current}, apply your change again and save with baseVersion ${current}`,
            { field: "baseVersion", currentVersion: current, baseVersion: input.baseVersion },
          );
        }
        const changes = checkStateWrite(rules, previous, next, { kind: writer });
        const { text, sizeBytes } = stateText(next, writer === "memory" ? "memory" : "state");
        if (latest && changes.length === 0) return { taskId: input.taskId, version: current, sizeBytes, unchanged: true };
        const version = current + 1;
        // Raw SQL with the JSON text we already have: Prisma's create walks a
        // large Json argument value by value, which costs more than the insert.
        await tx.$executeRaw`
          INSERT INTO "AgentStateVersion" (id, "workspaceId", "taskId", version, "requestId", state, owners, "sizeBytes", "createdAt")
          VALUES (${newId("stv")}, ${workspaceId}, ${input.taskId}, ${version}, ${input.requestId}, ${text}::json,
                  ${JSON.stringify(annotateOwners(rules, next))}::jsonb, ${sizeBytes}, ${now})`;
        saved = { sessionId: thread.sessionId, version };
        return { taskId: input.taskId, version, sizeBytes, unchanged: false };
      });
    } catch (error) {
      // Another save committed while this one waited for the lock: run it again
      // on the new latest version (a stale baseVersion then is a CONFLICT).
      if (!isDuplicateVersion(error)) throw error;
      if (attempt >= 3) {
        throw new DomainError("CONFLICT", `other saves of task ${input.taskId} kept committing first; load the state again and retry`, { field: "baseVersion" });
      }
    }
  }
  const committed = saved as { sessionId: string; version: number } | null;
  if (committed) deps.bus.publish("state:saved", { workspaceId, sessionId: committed.sessionId, taskId: input.taskId, version: committed.version });
  return result;
}

/** A unique violation, from Prisma's model API (P2002) or from raw SQL through a driver adapter (P2010). */
function isDuplicateVersion(error: unknown): boolean {
  if (isUniqueViolation(error)) return true;
  const meta = (error as { meta?: { driverAdapterError?: { cause?: { kind?: string } } } } | null)?.meta;
  return meta?.driverAdapterError?.cause?.kind === "UniqueConstraintViolation";
}

/**
 * Locks the thread's config row and reads, in the same statement, the request
 * that writes, the latest version and the caller's authority over both the
 * task and the request: one round trip instead of several on the hot path of
 * every save. On PostgreSQL a save that waited for the lock may read the
 * latest version as it was before the wait; its insert then collides on
 * (taskId, version) and writeVersion runs it again.
 */
async function lockThread(
  tx: Tx,
  agent: AgentPrincipal,
  taskId: string,
  requestId: string,
): Promise<LockedThread & { writer: WriterKind; latest: { version: number; state: StateObject } | null }> {
  const { workspaceId } = agent;
  const rows = await tx.$queryRaw<(LockedThread & WriterColumns & { latestVersion: number | null; latestState: string | null })[]>`
    SELECT c.config, c.ownership, t."sessionId", ${writerColumns(agent)},
      latest.version AS "latestVersion", latest.state AS "latestState"
    FROM "ThreadConfig" c
    JOIN "Task" t ON t.id = c."taskId"
    ${writerJoins(agent, requestId)}
    LEFT JOIN LATERAL (
      SELECT v.version, v.state::text AS state FROM "AgentStateVersion" v WHERE v."taskId" = c."taskId" ORDER BY v.version DESC LIMIT 1
    ) latest ON true
    WHERE c."taskId" = ${taskId} AND c."workspaceId" = ${workspaceId}
    FOR UPDATE OF c`;
  const row = rows[0];
  if (!row) {
    const task = await findTask(tx, agent, taskId);
    if (!task) throw notFound("task", taskId);
    throw new DomainError(
      "PRECONDITION_FAILED",
      `the thread of task ${taskId} has no config yet; call thread.configure with {"taskId": "${taskId}", "config": {...}} before saving state`,
      { field: "taskId" },
    );
  }
  const writer = await checkWritingRequest(tx, taskId, requestId, authorizedWriter(agent, taskId, row));
  const latest = row.latestVersion === null ? null : { version: row.latestVersion, state: JSON.parse(row.latestState!) as StateObject };
  return { config: parseJsonColumn(row.config), ownership: parseJsonColumn(row.ownership), sessionId: row.sessionId, writer, latest };
}

/**
 * The request a write belongs to. The agent must have authority over the task
 * and the request; the request must be running (or paused) and belong to the
 * task, or to a task above it in the task tree (an orchestrator writing
 * routing context into its sub-agent's thread). The writer kind is the kind of
 * the request's own task.
 */
export async function writingRequest(tx: Tx, agent: AgentPrincipal, taskId: string, requestId: string): Promise<{ id: string; writer: WriterKind }> {
  const [row] = await tx.$queryRaw<WriterColumns[]>`
    SELECT ${writerColumns(agent)}
    FROM "Task" t
    ${writerJoins(agent, requestId)}
    WHERE t.id = ${taskId} AND t."workspaceId" = ${agent.workspaceId}`;
  if (!row) throw notFound("task", taskId);
  const writer = await checkWritingRequest(tx, taskId, requestId, authorizedWriter(agent, taskId, row));
  return { id: requestId, writer };
}

/** What a write needs to know of its task `t` and its request `r` (whose task is `rt`). */
interface WriterColumns {
  taskAgent: string;
  taskKeyAtOrAbove: boolean;
  requestTaskId: string | null;
  requestStatus: RunStatus | null;
  requestKind: string | null;
  requestAgent: string | null;
  requestKeyAtOrAbove: boolean;
}

function writerColumns(agent: AgentPrincipal): Prisma.Sql {
  return Prisma.sql`t.agent AS "taskAgent", ${keyAtOrAbove("Task", "t", agent.agentKeyId)} AS "taskKeyAtOrAbove",
    r."taskId" AS "requestTaskId", r.status AS "requestStatus", rt.kind AS "requestKind", rt.agent AS "requestAgent",
    ${keyAtOrAbove("Request", "r", agent.agentKeyId)} AS "requestKeyAtOrAbove"`;
}

function writerJoins(agent: AgentPrincipal, requestId: string): Prisma.Sql {
  return Prisma.sql`LEFT JOIN "Request" r ON r.id = ${requestId} AND r."workspaceId" = ${agent.workspaceId}
    LEFT JOIN "Task" rt ON rt.id = r."taskId"`;
}

/**
 * The writing request, or null when it is missing or the agent may not act on
 * it (answered alike). A task the agent may not act on is NOT_FOUND.
 */
function authorizedWriter(agent: AgentPrincipal, taskId: string, row: WriterColumns): { taskId: string; status: RunStatus; kind: string } | null {
  if (!mayActOn(agent, { keyAtOrAbove: row.taskKeyAtOrAbove, agent: row.taskAgent })) throw notFound("task", taskId);
  if (row.requestTaskId === null || !mayActOn(agent, { keyAtOrAbove: row.requestKeyAtOrAbove, agent: row.requestAgent! })) return null;
  return { taskId: row.requestTaskId, status: row.requestStatus!, kind: row.requestKind! };
}

async function checkWritingRequest(
  tx: Tx,
  taskId: string,
  requestId: string,
  request: { taskId: string; status: RunStatus; kind: string } | null,
): Promise<WriterKind> {
  if (!request) throw new DomainError("NOT_FOUND", `request ${requestId} does not exist in this workspace`, { field: "requestId" });
  if (request.taskId !== taskId && !(await isAncestorTask(tx, request.taskId, taskId))) {
    throw new DomainError(
      "BAD_INPUT",
      `request ${requestId} belongs to task ${request.taskId}, which is neither task ${taskId} nor above it in the task tree; write with a request of the task or of an orchestrator above it`,
      { field: "requestId" },
    );
  }
  if (!isActive(request.status)) {
    throw new DomainError(
      "PRECONDITION_FAILED",
      `request ${requestId} already ended as ${request.status}; write thread state before completing the request`,
      { field: "requestId" },
    );
  }
  return request.kind === "ORCHESTRATOR" ? "orchestrator" : "agent";
}

async function isAncestorTask(tx: Tx, ancestorId: string, taskId: string): Promise<boolean> {
  const rows = await tx.$queryRaw<{ found: boolean }[]>`
    WITH RECURSIVE up AS (
      SELECT id, "parentTaskId", 1 AS depth FROM "Task" WHERE id = ${taskId}
      UNION ALL
      SELECT t.id, t."parentTaskId", up.depth + 1 FROM "Task" t JOIN up ON t.id = up."parentTaskId" WHERE up.depth < 1000
    )
    SELECT EXISTS (SELECT 1 FROM up WHERE id = ${ancestorId} AND id <> ${taskId}) AS found`;
  return rows[0]?.found === true;
}

// ---- Console: history, one version, diffs -----------------------------------

export interface StateVersionSummary {
  version: number;
  requestId: string | null;
  createdAt: string;
  sizeBytes: number;
}

export async function stateHistory(deps: ServiceDeps, workspaceId: string, taskId: string): Promise<{ taskId: string; versions: StateVersionSummary[] }> {
  await requireTask(deps, workspaceId, taskId);
  const rows = await deps.prisma.agentStateVersion.findMany({
    where: { taskId, workspaceId },
    orderBy: { version: "asc" },
    select: { version: true, requestId: true, createdAt: true, sizeBytes: true },
  });
  return { taskId, versions: rows.map((row) => ({ ...row, createdAt: row.createdAt.toISOString() })) };
}

/** One saved version with its owners; the latest when no version is given. */
export async function stateVersion(deps: ServiceDeps, workspaceId: string, taskId: string, version?: number) {
  await requireTask(deps, workspaceId, taskId);
  const row = await deps.prisma.agentStateVersion.findFirst({
    where: { taskId, workspaceId, ...(version === undefined ? {} : { version }) },
    orderBy: { version: "desc" },
  });
  if (!row) {
    if (version === undefined) return { taskId, version: 0, requestId: null, createdAt: null, sizeBytes: 0, state: null, owners: {} };
    throw await missingVersion(deps, taskId, version, "version");
  }
  return {
    taskId,
    version: row.version,
    requestId: row.requestId,
    createdAt: row.createdAt.toISOString(),
    sizeBytes: row.sizeBytes,
    state: row.state as StateObject,
    owners: (row.owners ?? {}) as Record<string, KeyOwnership>,
  };
}

/** What compare() produces: RFC 6902 operations (never fast-json-patch's internal _get). */
export type PatchOperation = Exclude<Operation, { op: "_get" }>;

export interface StateDiff {
  taskId: string;
  fromVersion: number;
  toVersion: number;
  operations: PatchOperation[];
  keys: KeyChangeSummary[];
}

/**
 * RFC 6902 operations turning version `fromVersion` into `toVersion` (version 0
 * is the empty thread), with each touched key's owner as recorded when the
 * version was saved.
 */
export async function stateDiff(deps: ServiceDeps, workspaceId: string, input: { taskId: string; fromVersion: number; toVersion: number }): Promise<StateDiff> {
  const { taskId, fromVersion, toVersion } = input;
  const wanted = [...new Set([fromVersion, toVersion].filter((version) => version > 0))];
  const [task, rows] = await Promise.all([
    deps.prisma.task.findFirst({ where: { id: taskId, workspaceId }, select: { id: true, config: { select: { ownership: true } } } }),
    deps.prisma.$queryRaw<{ version: number; state: string; owners: string | null }[]>`
      SELECT version, state::text AS state, owners::text AS owners FROM "AgentStateVersion"
      WHERE "taskId" = ${taskId} AND "workspaceId" = ${workspaceId} AND version = ANY(${wanted}::int[])`,
  ]);
  if (!task) throw notFound("task", taskId);
  const byVersion = new Map(
    rows.map((row) => [row.version, { state: JSON.parse(row.state) as StateObject, owners: row.owners === null ? null : (JSON.parse(row.owners) as unknown) }]),
  );
  for (const [version, field] of [[fromVersion, "fromVersion"], [toVersion, "toVersion"]] as const) {
    if (version > 0 && !byVersion.has(version)) throw await missingVersion(deps, taskId, version, field);
  }
  const from = fromVersion > 0 ? byVersion.get(fromVersion)! : null;
  const to = toVersion > 0 ? byVersion.get(toVersion)! : null;
  const fromState = from?.state ?? null;
  const toState = to?.state ?? null;
  const operations = diffParsedStates(fromState ?? {}, toState ?? {}) as PatchOperation[];
  // Owners as declared when each version was saved, the newer one winning; the
  // current rules only for keys a version recorded no owner for.
  const recorded = { ...((from?.owners ?? {}) as Record<string, KeyOwnership>), ...((to?.owners ?? {}) as Record<string, KeyOwnership>) };
  const owners = { ...annotateOwners(task.config?.ownership as OwnershipRules | null, fromState, toState), ...recorded };
  return { taskId, fromVersion, toVersion, operations, keys: summarizeDiff(operations, owners) };
}

async function requireTask(deps: ServiceDeps, workspaceId: string, taskId: string): Promise<void> {
  const task = await deps.prisma.task.findFirst({ where: { id: taskId, workspaceId }, select: { id: true } });
  if (!task) throw notFound("task", taskId);
}

async function missingVersion(deps: ServiceDeps, taskId: string, version: number, field: string): Promise<DomainError> {
  const latest = await deps.prisma.agentStateVersion.findFirst({ where: { taskId }, orderBy: { version: "desc" }, select: { version: true } });
  const range = latest ? `its versions run from 1 to ${latest.version}` : "it has no saved state yet";
  return new DomainError("NOT_FOUND", `task ${taskId} has no state version ${version}; ${range}`, { field, latestVersion: latest?.version ?? 0 });
}
