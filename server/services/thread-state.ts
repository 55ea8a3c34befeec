// A task's thread: its configuration and ownership rules, and its versioned
// agent state (save with optimistic concurrency, memory writes, history, diffs).
// A configuration runs in one transaction with its audit entry; a state
// version is one checked insert (writeVersion). state:saved is published after
// the commit.
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
import { findTask, keyAtOrAbove } from "./authority.ts";
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

interface ReadThread {
  /** The ownership rules as the database holds them (jsonb's text, or null): what the write checks still holds. */
  ownershipText: string | null;
  sessionId: string;
  writer: WriterKind;
  latest: { version: number; state: StateObject } | null;
}

/** Sends one statement and returns its rows: the direct statements outside a transaction, or a transaction's client. */
type RunStatement = <Row>(statement: Prisma.Sql) => Promise<Row[]>;

/** A version to insert, checked against the thread as read. */
interface VersionWrite {
  workspaceId: string;
  taskId: string;
  requestId: string;
  version: number;
  stateText: string;
  ownersText: string;
  sizeBytes: number;
  ownershipText: string | null;
  now: Date;
}

/**
 * The one write path for a new state version. The common case is two
 * statements and no transaction: the thread is read without a lock
 * (readThread: its ownership rules, the writing request, the caller's
 * authority and the latest version), the write is checked here (base version,
 * ownership, size), and one insert writes the next version, finding as it
 * writes that the rules and the writing request are still as read
 * (insertVersionIfUnchanged). When another save took that version first (the
 * unique (taskId, version)), or the rules changed or the request ended
 * meanwhile, the save is made again behind the thread's lock, where saves of
 * one task queue instead of retrying (writeBehindLock). Versions are
 * append-only and carry the request that wrote them, so they are their own
 * record; the audit log keeps decisions and configuration changes. An
 * unchanged state stores nothing.
 */
async function writeVersion(
  deps: ServiceDeps,
  agent: AgentPrincipal,
  input: { taskId: string; requestId: string; baseVersion?: number },
  build: BuildNext,
): Promise<SaveStateResult> {
  const now = deps.now();
  const direct: RunStatement = (statement) => deps.sql.query(statement);
  const thread = await readThread(direct, deps.prisma, agent, input.taskId, input.requestId, { locked: false });
  const planned = planVersion(agent, input, thread, thread.latest, build, now);
  if ("unchanged" in planned) return planned.unchanged;
  if (await insertVersionIfUnchanged(direct, planned.write).catch(falseOnDuplicateVersion)) return published(deps, thread, planned.write);
  return writeBehindLock(deps, agent, input, build, now);
}

/**
 * A save made behind the lock of the thread's config row, in a transaction:
 * saves of one task take their turns, and a baseVersion check is exact. On
 * PostgreSQL a save that waited for the lock may read the latest version as it
 * was before the wait; its insert then collides on (taskId, version), and it
 * runs again reading the latest version behind the lock it now holds.
 */
async function writeBehindLock(
  deps: ServiceDeps,
  agent: AgentPrincipal,
  input: { taskId: string; requestId: string; baseVersion?: number },
  build: BuildNext,
  now: Date,
): Promise<SaveStateResult> {
  for (let attempt = 1; ; attempt++) {
    let saved: { thread: ReadThread; write: VersionWrite } | null = null;
    const result = await transact(deps, async (tx) => {
      // A transaction run again (after a deadlock, say) starts with nothing saved.
      saved = null;
      const inTransaction: RunStatement = (statement) => tx.$queryRaw(statement);
      const thread = await readThread(inTransaction, tx, agent, input.taskId, input.requestId, { locked: true });
      const latest = attempt === 1 ? thread.latest : await readLatest(tx, input.taskId);
      const planned = planVersion(agent, input, thread, latest, build, now);
      if ("unchanged" in planned) return planned.unchanged;
      // Nothing written when the writing request ended meanwhile: the next read says so.
      if (!(await insertVersionIfUnchanged(inTransaction, planned.write))) return null;
      saved = { thread, write: planned.write };
      return null;
    })
      // Another save committed while this one waited for the lock (the version is
      // taken, and the transaction ended with the error): run it again on the new latest version.
      .catch(falseOnDuplicateVersion);
    if (result) return result;
    const committed = saved as { thread: ReadThread; write: VersionWrite } | null;
    if (committed) return published(deps, committed.thread, committed.write);
    if (attempt >= 3) {
      throw new DomainError("CONFLICT", `other saves of task ${input.taskId} kept committing first; load the state again and retry`, { field: "baseVersion" });
    }
  }
}

/**
 * The write a save makes on the thread as read: refused (a stale baseVersion,
 * a key its writer does not own, over the size limit), answered as it stands
 * (nothing changed), or the next version to insert.
 */
function planVersion(
  agent: AgentPrincipal,
  input: { taskId: string; requestId: string; baseVersion?: number },
  thread: ReadThread,
  latest: ReadThread["latest"],
  build: BuildNext,
  now: Date,
): { unchanged: SaveStateResult } | { write: VersionWrite } {
  const current = latest?.version ?? 0;
  const rules = thread.ownershipText === null ? null : (JSON.parse(thread.ownershipText) as OwnershipRules);
  const previous = latest?.state ?? null;
  const { next, writer } = build(previous, rules, thread.writer);
  if (input.baseVersion !== undefined && input.baseVersion !== current) {
    // A retry of a save that did commit (its answer was lost) finds its own
    // state on top: nothing would be lost by it, so it is answered, not refused.
    if (latest && topLevelChanges(previous, next).length === 0) {
      return { unchanged: { taskId: input.taskId, version: current, sizeBytes: stateText(next, "state").sizeBytes, unchanged: true } };
    }
    throw new DomainError(
      "CONFLICT",
      `the state of task ${input.taskId} is at version ${current}, but this save is based on version ${input.baseVersion}; load version ${current}, apply your change again and save with baseVersion ${current}`,
      { field: "baseVersion", currentVersion: current, baseVersion: input.baseVersion },
    );
  }
  const changes = checkStateWrite(rules, previous, next, { kind: writer });
  const { text, sizeBytes } = stateText(next, writer === "memory" ? "memory" : "state");
  if (latest && changes.length === 0) return { unchanged: { taskId: input.taskId, version: current, sizeBytes, unchanged: true } };
  return {
    write: {
      workspaceId: agent.workspaceId,
      taskId: input.taskId,
      requestId: input.requestId,
      version: current + 1,
      stateText: text,
      ownersText: JSON.stringify(annotateOwners(rules, next)),
      sizeBytes,
      ownershipText: thread.ownershipText,
      now,
    },
  };
}

/** Announces a committed version (state:saved) and answers with it. */
function published(deps: ServiceDeps, thread: ReadThread, write: VersionWrite): SaveStateResult {
  deps.bus.publish("state:saved", { workspaceId: write.workspaceId, sessionId: thread.sessionId, taskId: write.taskId, version: write.version });
  return { taskId: write.taskId, version: write.version, sizeBytes: write.sizeBytes, unchanged: false };
}

/** Another save took the version first: the insert's unique (taskId, version) refused it. */
function falseOnDuplicateVersion(error: unknown): false {
  if (isUniqueViolation(error)) return false;
  throw error;
}

/**
 * Inserts a task's next state version, one statement, only while the thread's
 * ownership rules are the ones the write was checked against and the writing
 * request still runs; true when it wrote. It shares the config row's lock, so
 * it waits for a save behind that lock and for a configure, and never takes
 * the version of a save that waits there. A version another save took first is
 * refused by the unique (taskId, version).
 */
export async function insertVersionIfUnchanged(run: RunStatement, write: VersionWrite): Promise<boolean> {
  // The state's JSON text is inserted as it is: Prisma's create walks a large
  // Json value by value, which costs more than the insert.
  const rows = await run<{ version: number }>(Prisma.sql`
    INSERT INTO "AgentStateVersion" (id, "workspaceId", "taskId", version, "requestId", state, owners, "sizeBytes", "createdAt")
    SELECT ${newId("stv")}, ${write.workspaceId}, ${write.taskId}, ${write.version}, ${write.requestId}, ${write.stateText}::json,
      ${write.ownersText}::jsonb, ${write.sizeBytes}, ${write.now}
    FROM "ThreadConfig" c
    -- The ownership rules the write was checked against are still the thread's (jsonb's text; NULL for none).
    WHERE c."taskId" = ${write.taskId} AND c."workspaceId" = ${write.workspaceId}
      AND c.ownership::text IS NOT DISTINCT FROM ${write.ownershipText}::text
      -- The writing request has not ended since it was read.
      AND EXISTS (SELECT 1 FROM "Request" r WHERE r.id = ${write.requestId} AND r.status IN ('RUNNING', 'PAUSED'))
    -- Behind a save that holds the thread's lock, or a configure that is changing
    -- the rules: this waits, and then checks the rules as that left them.
    FOR SHARE OF c
    RETURNING version`);
  return rows.length === 1;
}

/**
 * Reads, in one statement, the thread's config row, the request that writes,
 * the latest version and the caller's authority over both the task and the
 * request; with `locked`, behind the config row's lock. Unlocked, what may
 * change before the write (the rules, the request's status, the latest
 * version) the insert checks as it writes.
 */
async function readThread(
  run: RunStatement,
  db: Tx,
  agent: AgentPrincipal,
  taskId: string,
  requestId: string,
  { locked }: { locked: boolean },
): Promise<ReadThread> {
  const { workspaceId } = agent;
  const rows = await run<{ ownershipText: string | null; sessionId: string; latestVersion: number | null; latestState: string | null } & WriterColumns>(Prisma.sql`
    SELECT c.ownership::text AS "ownershipText", t."sessionId", ${writerColumns(agent)},
      latest.version AS "latestVersion", latest.state AS "latestState"
    FROM "ThreadConfig" c
    JOIN "Task" t ON t.id = c."taskId"
    ${writerJoins(agent, requestId)}
    LEFT JOIN LATERAL (
      SELECT v.version, v.state::text AS state FROM "AgentStateVersion" v WHERE v."taskId" = c."taskId" ORDER BY v.version DESC LIMIT 1
    ) latest ON true
    WHERE c."taskId" = ${taskId} AND c."workspaceId" = ${workspaceId}
    ${locked ? Prisma.sql`FOR UPDATE OF c` : Prisma.empty}`);
  const row = rows[0];
  if (!row) {
    const task = await findTask(db, agent, taskId);
    if (!task) throw notFound("task", taskId);
    throw new DomainError(
      "PRECONDITION_FAILED",
      `the thread of task ${taskId} has no config yet; call thread.configure with {"taskId": "${taskId}", "config": {...}} before saving state`,
      { field: "taskId" },
    );
  }
  const writer = await checkWritingRequest(db, taskId, requestId, authorizedWriter(agent, taskId, row));
  const latest = row.latestVersion === null ? null : { version: row.latestVersion, state: JSON.parse(row.latestState!) as StateObject };
  return { ownershipText: row.ownershipText, sessionId: row.sessionId, writer, latest };
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
