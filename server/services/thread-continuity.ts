// Continuity per agent and task: a stateless agent's pruned tool-call history
// (restore) or a stateful agent's own conversation id (reference). Records are
// keyed by the task and the task's agent, and only that task's own requests
// read or write them, so two agents never see each other's continuity.
import { Prisma } from "../db/generated/client.ts";
import { mayActOn } from "../domain/authority.ts";
import { DomainError, notFound } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import { jsonSize } from "../domain/json.ts";
import { isActive, type RunStatus } from "../domain/lifecycle.ts";
import type { AgentPrincipal } from "../domain/principal.ts";
import { getConfigValue, type ThreadConfig } from "../domain/thread/config.ts";
import {
  continuityKey,
  DEFAULT_KEEP_TOOL_CALLS,
  nextContinuity,
  type ContinuityState,
  type ContinuityStrategy,
  type ToolCallRecord,
} from "../domain/thread/continuity.ts";
import { keyAtOrAbove, parseJsonColumn } from "./authority.ts";
import type { ServiceDeps, Tx } from "./deps.ts";
import { transact } from "./transaction.ts";

/** Thread config key for the restore pruning policy when a record call names none. */
export const KEEP_TOOL_CALLS_CONFIG_KEY = "keepToolCalls";

export interface ContinuityView {
  taskId: string;
  agent: string;
  strategy: ContinuityStrategy | null;
  /** restore: the kept tool calls, oldest first. */
  toolCalls: ToolCallRecord[];
  /** reference: the agent's conversation id. */
  conversationId: string | null;
  /** How many times the record changed; 0 while there is none. */
  version: number;
  sizeBytes: number;
}

export async function loadContinuity(deps: ServiceDeps, agent: AgentPrincipal, input: { taskId: string; requestId: string }): Promise<ContinuityView> {
  const task = await ownRequestTask(deps.prisma, agent, input.taskId, input.requestId, { mustBeActive: false });
  const row = await deps.prisma.threadContinuity.findUnique({ where: { taskId_agent: { taskId: task.id, agent: task.agent } } });
  return view(task.id, task.agent, row);
}

export interface ToolCallInput {
  callId: string;
  tool: string;
  args?: unknown;
  result?: unknown;
  /** When the call ran; defaults to now. */
  at?: string;
}

export type RecordContinuityInput =
  | { strategy: "restore"; taskId: string; requestId: string; toolCalls: ToolCallInput[]; keepLast?: number }
  | { strategy: "reference"; taskId: string; requestId: string; conversationId?: string };

export type RecordContinuityResult =
  | (ContinuityView & { strategy: "restore"; pruned: number })
  | (ContinuityView & { strategy: "reference"; conversationId: string; created: boolean });

/**
 * restore: appends this request's tool calls (a call reported again replaces
 * its earlier record) and keeps the last N: `keepLast`, else the thread
 * config's keepToolCalls, else 20.
 * reference: returns the agent's conversation id, storing it on the first
 * request: the caller's id if it sends one, else a new cnv_ id.
 */
export async function recordContinuity(deps: ServiceDeps, agent: AgentPrincipal, input: RecordContinuityInput): Promise<RecordContinuityResult> {
  const now = deps.now();
  return transact(deps, async (tx) => {
    const task = await ownRequestTask(tx, agent, input.taskId, input.requestId, { mustBeActive: true });
    // Serialises writers of this one record; the first insert cannot race.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${"continuity:" + continuityKey(task.id, task.agent)}))`;
    const row = await tx.threadContinuity.findUnique({ where: { taskId_agent: { taskId: task.id, agent: task.agent } } });
    const previous = stateOf(row);

    if (input.strategy === "reference") {
      const stored = previous?.strategy === "reference" ? previous.conversationId : null;
      if (stored && input.conversationId && input.conversationId !== stored) {
        throw new DomainError(
          "CONFLICT",
          `agent "${task.agent}" of task ${task.id} already has conversation ${stored}; keep using it (a task's agent has one conversation)`,
          { field: "conversationId", conversationId: stored },
        );
      }
      const next = nextContinuity(previous, { strategy: "reference", newId: () => input.conversationId ?? newId("cnv") });
      const conversationId = next.strategy === "reference" ? next.conversationId : "";
      const created = conversationId !== stored;
      const written = created ? await write(tx, agent.workspaceId, task, row?.version ?? 0, next, now) : row!;
      return { ...view(task.id, task.agent, written), strategy: "reference", conversationId, created };
    }

    const keepLast = input.keepLast ?? keepFromConfig(task.config);
    const records: ToolCallRecord[] = input.toolCalls.map((call) => ({
      requestId: input.requestId,
      callId: call.callId,
      tool: call.tool,
      args: call.args ?? null,
      ...(call.result === undefined ? {} : { result: call.result }),
      at: call.at ?? now.toISOString(),
    }));
    const next = nextContinuity(previous, { strategy: "restore", toolCalls: records, keepLast });
    const earlier = previous?.strategy === "restore" ? previous.toolCalls : [];
    const written = await write(tx, agent.workspaceId, task, row?.version ?? 0, next, now);
    // Records dropped by pruning: the merged history (earlier calls plus the
    // calls new to it; a re-reported call replaces its record) minus those kept.
    const known = new Set(earlier.map(recordKey));
    const added = new Set(records.map(recordKey).filter((key) => !known.has(key))).size;
    const kept = next.strategy === "restore" ? next.toolCalls.length : 0;
    return { ...view(task.id, task.agent, written), strategy: "restore", pruned: earlier.length + added - kept };
  });
}

const recordKey = (record: ToolCallRecord) => JSON.stringify([record.requestId, record.callId]);

function keepFromConfig(config: unknown): number {
  const value = getConfigValue(config as ThreadConfig | null, KEEP_TOOL_CALLS_CONFIG_KEY);
  if (value === undefined) return DEFAULT_KEEP_TOOL_CALLS;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new DomainError(
      "PRECONDITION_FAILED",
      `the thread config's ${KEEP_TOOL_CALLS_CONFIG_KEY} is ${JSON.stringify(value)}, not a whole number of tool calls; fix it with thread.configure or send keepLast`,
      { field: `config.${KEEP_TOOL_CALLS_CONFIG_KEY}` },
    );
  }
  return value;
}

type ContinuityRow = Awaited<ReturnType<ServiceDeps["prisma"]["threadContinuity"]["findUnique"]>>;

async function write(
  tx: Tx,
  workspaceId: string,
  task: { id: string; agent: string },
  version: number,
  next: ContinuityState,
  now: Date,
): Promise<NonNullable<ContinuityRow>> {
  const data = {
    strategy: next.strategy,
    toolCalls: next.strategy === "restore" ? (next.toolCalls as unknown as Prisma.InputJsonValue) : Prisma.DbNull,
    conversationId: next.strategy === "reference" ? next.conversationId : null,
    version: version + 1,
    sizeBytes: sizeOf(next),
    updatedAt: now,
  };
  return tx.threadContinuity.upsert({
    where: { taskId_agent: { taskId: task.id, agent: task.agent } },
    create: { workspaceId, taskId: task.id, agent: task.agent, ...data, createdAt: now },
    update: data,
  });
}

function sizeOf(state: ContinuityState): number {
  return state.strategy === "restore" ? jsonSize(state.toolCalls) : jsonSize(state.conversationId);
}

function stateOf(row: ContinuityRow): ContinuityState | null {
  if (!row) return null;
  return row.strategy === "restore"
    ? { strategy: "restore", toolCalls: (row.toolCalls ?? []) as unknown as ToolCallRecord[] }
    : { strategy: "reference", conversationId: row.conversationId ?? "" };
}

function view(taskId: string, agent: string, row: ContinuityRow): ContinuityView {
  return {
    taskId,
    agent,
    strategy: row?.strategy ?? null,
    toolCalls: row?.strategy === "restore" ? ((row.toolCalls ?? []) as unknown as ToolCallRecord[]) : [],
    conversationId: row?.strategy === "reference" ? row.conversationId : null,
    version: row?.version ?? 0,
    sizeBytes: row?.sizeBytes ?? 0,
  };
}

/**
 * The task, checked to be the one `requestId` belongs to: continuity is the
 * task's own agent's, so only that task's requests may read or write it. The
 * caller needs authority over both the request and the task.
 */
async function ownRequestTask(
  db: Tx | ServiceDeps["prisma"],
  agent: AgentPrincipal,
  taskId: string,
  requestId: string,
  options: { mustBeActive: boolean },
) {
  const [request] = await db.$queryRaw<
    { status: RunStatus; taskId: string; agent: string; config: unknown; requestKeyAtOrAbove: boolean; taskKeyAtOrAbove: boolean }[]
  >`
    SELECT r.status, t.id AS "taskId", t.agent, c.config,
      ${keyAtOrAbove("Request", "r", agent.agentKeyId)} AS "requestKeyAtOrAbove", ${keyAtOrAbove("Task", "t", agent.agentKeyId)} AS "taskKeyAtOrAbove"
    FROM "Request" r JOIN "Task" t ON t.id = r."taskId" LEFT JOIN "ThreadConfig" c ON c."taskId" = t.id
    WHERE r.id = ${requestId} AND r."workspaceId" = ${agent.workspaceId}`;
  if (!request || !mayActOn(agent, { keyAtOrAbove: request.requestKeyAtOrAbove, agent: request.agent })) {
    throw new DomainError("NOT_FOUND", `request ${requestId} does not exist in this workspace`, { field: "requestId" });
  }
  if (request.taskId !== taskId) {
    throw new DomainError(
      "FORBIDDEN",
      `request ${requestId} belongs to task ${request.taskId}, not ${taskId}; an agent reads and writes only its own task's continuity`,
      { field: "requestId" },
    );
  }
  if (!mayActOn(agent, { keyAtOrAbove: request.taskKeyAtOrAbove, agent: request.agent })) throw notFound("task", taskId);
  if (options.mustBeActive && !isActive(request.status)) {
    throw new DomainError("PRECONDITION_FAILED", `request ${requestId} already ended as ${request.status}; record continuity before completing the request`, {
      field: "requestId",
    });
  }
  return { id: request.taskId, agent: request.agent, config: parseJsonColumn(request.config) ?? null };
}
