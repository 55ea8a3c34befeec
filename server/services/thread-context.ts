// Context for an agent's next request: the thread's explicit entities (expired
// ones cleared), the last few tool turns from the task's trace, and fuzzy
// lookups among every entity the thread has seen.
import { Prisma } from "../db/generated/client.ts";
import { DomainError, notFound } from "../domain/errors.ts";
import type { AgentPrincipal } from "../domain/principal.ts";
import { getConfigValue, type ThreadConfig } from "../domain/thread/config.ts";
import {
  assembleContext,
  DEFAULT_INACTIVITY_WINDOW_MS,
  DEFAULT_RECENT_TURNS,
  type AssembledContext,
  type Entity,
  type Turn,
} from "../domain/thread/context.ts";
import { findTask } from "./authority.ts";
import type { ServiceDeps } from "./deps.ts";
import { transact } from "./transaction.ts";
import { writingRequest } from "./thread-state.ts";

/** Trace event types that count as tool calls of a turn. */
export const TOOL_EVENT_TYPES = ["tool_call", "tool_result", "tool.executed"] as const;

/** Thread config keys that set the defaults of context assembly. */
export const CONTEXT_CONFIG_KEYS = { inactivityWindowMs: "inactivityWindowMs", recentTurns: "recentTurns" } as const;

export interface EntityInput {
  id: string;
  name: string;
  type?: string;
  data?: unknown;
}

/**
 * Marks entities active in the thread now (the explicit part of its context):
 * new ones are added, known ones refreshed and, if they had expired, revived.
 */
export async function touchEntities(
  deps: ServiceDeps,
  agent: AgentPrincipal,
  input: { taskId: string; requestId: string; entities: EntityInput[] },
): Promise<{ taskId: string; touched: number }> {
  const seen = new Map<string, number>();
  input.entities.forEach((entity, index) => {
    const first = seen.get(entity.id);
    if (first !== undefined) {
      throw new DomainError("BAD_INPUT", `entities[${index}] repeats id "${entity.id}" of entities[${first}]; send each entity once`, { field: `entities[${index}].id` });
    }
    seen.set(entity.id, index);
  });
  const now = deps.now();
  await transact(deps, async (tx) => {
    await writingRequest(tx, agent, input.taskId, input.requestId);
    for (const entity of input.entities) {
      const data = entity.data === undefined ? Prisma.DbNull : (entity.data as Prisma.InputJsonValue);
      await tx.threadEntity.upsert({
        where: { taskId_entityId: { taskId: input.taskId, entityId: entity.id } },
        create: {
          workspaceId: agent.workspaceId,
          taskId: input.taskId,
          entityId: entity.id,
          name: entity.name,
          type: entity.type ?? null,
          data,
          firstSeenAt: now,
          lastActiveAt: now,
        },
        update: { name: entity.name, type: entity.type ?? null, data, lastActiveAt: now, clearedAt: null },
      });
    }
  });
  return { taskId: input.taskId, touched: input.entities.length };
}

export interface AssembleInput {
  taskId: string;
  lookups?: string[];
  recentTurns?: number;
  inactivityWindowMs?: number;
  lookupLimit?: number;
}

/**
 * Assembles the context and clears the entities that expired in the process,
 * so they are not used again until touched again. The window and the number of
 * turns come from the input, else the thread config, else the defaults (7 h, 3).
 */
export async function assembleThreadContext(
  deps: ServiceDeps,
  agent: AgentPrincipal,
  input: AssembleInput,
): Promise<AssembledContext & { taskId: string }> {
  const now = deps.now();
  const task = await findTask(deps.prisma, agent, input.taskId);
  if (!task) throw notFound("task", input.taskId);
  const config = (task.config ?? null) as ThreadConfig | null;
  const inactivityWindowMs = input.inactivityWindowMs ?? configNumber(config, CONTEXT_CONFIG_KEYS.inactivityWindowMs) ?? DEFAULT_INACTIVITY_WINDOW_MS;
  const recentTurns = input.recentTurns ?? configNumber(config, CONTEXT_CONFIG_KEYS.recentTurns) ?? DEFAULT_RECENT_TURNS;

  const [rows, turns] = await Promise.all([
    deps.prisma.threadEntity.findMany({ where: { taskId: task.id }, orderBy: [{ lastActiveAt: "desc" }, { entityId: "asc" }] }),
    recentTurnsOf(deps, task.id, recentTurns),
  ]);
  const seen = rows.map(toEntity);
  const uncleared = rows.filter((row) => row.clearedAt === null).map(toEntity);
  const context = assembleContext({
    entities: uncleared,
    seen,
    turns,
    lookups: input.lookups,
    now,
    inactivityWindowMs,
    recentTurns,
    lookupLimit: input.lookupLimit,
  });
  if (context.expired.length > 0) {
    await deps.prisma.threadEntity.updateMany({
      where: { taskId: task.id, entityId: { in: context.expired }, clearedAt: null },
      data: { clearedAt: now },
    });
  }
  return { taskId: task.id, ...context };
}

function configNumber(config: ThreadConfig | null, key: string): number | undefined {
  const value = getConfigValue(config, key);
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new DomainError(
      "PRECONDITION_FAILED",
      `the thread config's ${key} is ${JSON.stringify(value)}, not a number; fix it with thread.configure or pass ${key} here`,
      { field: `config.${key}` },
    );
  }
  return value;
}

function toEntity(row: { entityId: string; name: string; type: string | null; data: unknown; lastActiveAt: Date }): Entity {
  return {
    id: row.entityId,
    name: row.name,
    ...(row.type === null ? {} : { type: row.type }),
    ...(row.data === null || row.data === undefined ? {} : { data: row.data }),
    lastActiveAt: row.lastActiveAt.toISOString(),
  };
}

/**
 * The last `count` requests of the task that had tool events, oldest first,
 * each with its tool calls (deduplicated by call id: a tool_call and its
 * tool_result are one call). Only ids and names are read, never payloads.
 */
async function recentTurnsOf(deps: ServiceDeps, taskId: string, count: number): Promise<Turn[]> {
  if (!Number.isSafeInteger(count) || count <= 0) return [];
  const types = [...TOOL_EVENT_TYPES];
  const latest = await deps.prisma.$queryRaw<{ requestId: string }[]>`
    SELECT "requestId" FROM "TraceEvent"
    WHERE "taskId" = ${taskId} AND type = ANY(${types}::text[])
    GROUP BY "requestId" ORDER BY MIN(id) DESC LIMIT ${count}`;
  if (latest.length === 0) return [];
  const events = await deps.prisma.$queryRaw<{ id: bigint; requestId: string; type: string; name: string | null; callId: string | null; createdAt: Date }[]>`
    SELECT id, "requestId", type, name, "createdAt",
      COALESCE(data->>'callId', data->>'approvalId') AS "callId"
    FROM "TraceEvent"
    WHERE "taskId" = ${taskId} AND "requestId" = ANY(${latest.map((row) => row.requestId)}::text[]) AND type = ANY(${types}::text[])
    ORDER BY id`;
  const turns = new Map<string, Turn & { ids: Set<string> }>();
  for (const event of events) {
    let turn = turns.get(event.requestId);
    if (!turn) {
      turn = { requestId: event.requestId, at: new Date(event.createdAt).toISOString(), toolCalls: [], ids: new Set() };
      turns.set(event.requestId, turn);
    }
    const callId = event.callId ?? `evt_${event.id}`;
    if (turn.ids.has(callId)) continue;
    turn.ids.add(callId);
    turn.toolCalls.push({ callId, tool: event.name ?? "unknown" });
  }
  return [...turns.values()].map(({ ids: _ids, ...turn }) => turn);
}
