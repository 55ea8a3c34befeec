// How an agent picks up where it left off in a task: stateless agents get their
// recent tool history back (restore), stateful ones their own conversation id (reference).
import { DomainError } from "../errors.ts";

export type ContinuityStrategy = "restore" | "reference";

/** One tool call and its result together, so pruning never separates the two. */
export type ToolCallRecord = {
  requestId: string;
  callId: string;
  tool: string;
  args: unknown;
  result?: unknown;
  at: string;
};

export type ContinuityState =
  | { strategy: "restore"; toolCalls: ToolCallRecord[] }
  | { strategy: "reference"; conversationId: string };

/** What the request that just ended contributes. */
export type ContinuityUpdate =
  | { strategy: "restore"; toolCalls: ToolCallRecord[]; keepLast?: number }
  | { strategy: "reference"; newId: () => string };

export const DEFAULT_KEEP_TOOL_CALLS = 20;

/**
 * Continuity belongs to one agent in one task: a stateless agent is handed back
 * only its own tool calls, never another agent's, and a task's follow-on
 * requests (R3, then R8 in T3) continue the same history. Task ids never contain
 * ":", so the first ":" separates the two parts and distinct pairs never collide.
 */
export function continuityKey(taskId: string, agent: string): string {
  if (taskId === "" || taskId.includes(":")) {
    throw new DomainError("BAD_INPUT", `continuity needs a task id without ":", got ${JSON.stringify(taskId)}`, { field: "taskId" });
  }
  if (agent.trim() === "") {
    throw new DomainError("BAD_INPUT", "continuity needs the agent's name; got an empty one", { field: "agent" });
  }
  return `${taskId}:${agent}`;
}

/**
 * The last `keepLast` tool calls, oldest first. History is kept in the order the
 * calls were recorded, which is the order they happened within the task.
 */
export function pruneToolHistory(history: readonly ToolCallRecord[], keepLast = DEFAULT_KEEP_TOOL_CALLS): ToolCallRecord[] {
  if (!Number.isSafeInteger(keepLast) || keepLast < 0) {
    throw new DomainError(
      "BAD_INPUT",
      `keepLast must be a whole number of tool calls, 0 or more, got ${keepLast}; the default is ${DEFAULT_KEEP_TOOL_CALLS}`,
      { field: "keepLast" },
    );
  }
  return keepLast === 0 ? [] : history.slice(-keepLast);
}

/** The agent's conversation id: the stored one, or a new one on its first request. */
export function referenceFor(existing: string | null, newId: () => string): { conversationId: string; created: boolean } {
  if (existing) return { conversationId: existing, created: false };
  const conversationId = newId();
  if (typeof conversationId !== "string" || conversationId === "") {
    throw new DomainError("BAD_INPUT", "the new conversation id is empty; the id generator must return a non-empty string", {
      field: "conversationId",
    });
  }
  return { conversationId, created: true };
}

/**
 * The continuity to store after a request. For restore, the request's tool calls
 * are appended and the history pruned; a call reported again (same request and
 * call id, as when an agent retries its report) replaces the earlier record in
 * place, so retries never duplicate history. If the agent's strategy changed, the
 * old state is meaningless to it and the new strategy starts fresh.
 */
export function nextContinuity(previous: ContinuityState | null, update: ContinuityUpdate): ContinuityState {
  if (update.strategy === "reference") {
    const existing = previous?.strategy === "reference" ? previous.conversationId : null;
    return { strategy: "reference", conversationId: referenceFor(existing, update.newId).conversationId };
  }
  update.toolCalls.forEach(checkRecord);
  const history = previous?.strategy === "restore" ? [...previous.toolCalls] : [];
  const position = new Map(history.map((record, index) => [recordKey(record), index]));
  for (const record of update.toolCalls) {
    const index = position.get(recordKey(record));
    if (index === undefined) {
      position.set(recordKey(record), history.length);
      history.push(record);
    } else {
      history[index] = record;
    }
  }
  return { strategy: "restore", toolCalls: pruneToolHistory(history, update.keepLast) };
}

function recordKey(record: ToolCallRecord): string {
  return JSON.stringify([record.requestId, record.callId]);
}

function checkRecord(record: ToolCallRecord, index: number): void {
  const field = `toolCalls[${index}]`;
  for (const name of ["requestId", "callId", "tool", "at"] as const) {
    const value: unknown = record[name];
    if (typeof value !== "string" || value === "") {
      throw new DomainError("BAD_INPUT", `${field}.${name} must be a non-empty string, got ${JSON.stringify(value) ?? "undefined"}`, {
        field: `${field}.${name}`,
      });
    }
  }
  if (Number.isNaN(Date.parse(record.at))) {
    throw new DomainError("BAD_INPUT", `${field}.at is ${JSON.stringify(record.at)}, not an ISO timestamp; send e.g. "2026-01-31T12:00:00.000Z"`, {
      field: `${field}.at`,
    });
  }
}
