// What an agent is handed for its next request, in priority order: authoritative
// explicit state, then the last few tool turns in compact form, then name lookups.
import Fuse from "fuse.js";
import { DomainError } from "../errors.ts";
import { jsonSize } from "../json.ts";

export type Entity = { id: string; name: string; type?: string; data?: unknown; lastActiveAt: string };
export type Turn = { requestId: string; at: string; toolCalls: { callId: string; tool: string; result?: unknown }[] };
export type ToolTurn = { requestId: string; calls: { id: string; name: string }[] };
/** `score` is a similarity from 0 to 1, where 1 is an exact match. */
export type EntityMatch = { id: string; name: string; type?: string; score: number };
export type Lookup = { query: string; matches: EntityMatch[] };

/**
 * Field order is priority order. When sources disagree, an earlier one wins:
 * explicit entities are authoritative; recent tool outputs are kept compact
 * (which calls ran, by id and tool name); lookups are guesses by name.
 */
export type AssembledContext = {
  explicit: { entities: Entity[] };
  expired: string[];
  recentToolOutputs: ToolTurn[];
  lookups: Lookup[];
  sizeBytes: number;
};

export const DEFAULT_INACTIVITY_WINDOW_MS = 7 * 60 * 60 * 1000;
export const DEFAULT_RECENT_TURNS = 3;
export const DEFAULT_LOOKUP_LIMIT = 5;

// Fuse scores run from 0 (exact) to 1; 0.4 keeps one-letter typos of short names
// ("Acmee" for "Acme Corp") and drops unrelated names.
const FUSE_THRESHOLD = 0.4;

/**
 * Splits entities into those still in play and those idle for the whole window
 * or longer. Expired ones are to be cleared from explicit state, not used.
 * A lastActiveAt in the future (clock skew between writers) counts as active.
 */
export function activeEntities(
  entities: readonly Entity[],
  now: Date,
  windowMs = DEFAULT_INACTIVITY_WINDOW_MS,
): { active: Entity[]; expired: Entity[] } {
  checkNow(now);
  if (!Number.isFinite(windowMs) || windowMs <= 0) {
    throw new DomainError("BAD_INPUT", `the inactivity window must be a positive number of milliseconds, got ${windowMs}`, {
      field: "inactivityWindowMs",
    });
  }
  const active: Entity[] = [];
  const expired: Entity[] = [];
  for (const entity of entities) {
    const lastActive = Date.parse(entity.lastActiveAt);
    if (Number.isNaN(lastActive)) {
      throw new DomainError(
        "BAD_INPUT",
        `entity ${entity.id} has lastActiveAt ${JSON.stringify(entity.lastActiveAt)}, not an ISO timestamp; store e.g. "2026-01-31T12:00:00.000Z"`,
        { field: "lastActiveAt", entityId: entity.id },
      );
    }
    (now.getTime() - lastActive >= windowMs ? expired : active).push(entity);
  }
  return { active, expired };
}

/** The last `count` turns that called at least one tool, oldest first, as call ids and tool names. */
export function recentToolOutputs(turns: readonly Turn[], count = DEFAULT_RECENT_TURNS): ToolTurn[] {
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new DomainError("BAD_INPUT", `recentTurns must be a whole number of turns, 0 or more, got ${count}`, { field: "recentTurns" });
  }
  if (count === 0) return [];
  return turns
    .filter((turn) => turn.toolCalls.length > 0)
    .slice(-count)
    .map((turn) => ({ requestId: turn.requestId, calls: turn.toolCalls.map((call) => ({ id: call.callId, name: call.tool })) }));
}

/**
 * Fuzzy search by name, best match first: case, accents and small typos are
 * forgiven, and the query may match anywhere in the name.
 */
export function lookupEntity(entities: readonly Entity[], query: string, options: { limit?: number } = {}): EntityMatch[] {
  return searcher(entities)(query, options.limit ?? DEFAULT_LOOKUP_LIMIT);
}

/**
 * Lookups search every entity given, including those that just expired: expiry
 * takes an entity out of the authoritative state, but the thread has still seen
 * it and can find it by name. `seen`, when given, is what lookups search instead:
 * every entity the thread has ever seen, including ones cleared earlier.
 */
export function assembleContext(input: {
  entities: readonly Entity[];
  seen?: readonly Entity[];
  turns: readonly Turn[];
  lookups?: readonly string[];
  now: Date;
  inactivityWindowMs?: number;
  recentTurns?: number;
  lookupLimit?: number;
}): AssembledContext {
  const { active, expired } = activeEntities(input.entities, input.now, input.inactivityWindowMs);
  const search = searcher(input.seen ?? input.entities);
  const context = {
    explicit: { entities: active },
    expired: expired.map((entity) => entity.id),
    recentToolOutputs: recentToolOutputs(input.turns, input.recentTurns),
    lookups: (input.lookups ?? []).map((query) => ({ query, matches: search(query, input.lookupLimit ?? DEFAULT_LOOKUP_LIMIT) })),
  };
  return { ...context, sizeBytes: jsonSize(context) };
}

function searcher(entities: readonly Entity[]): (query: string, limit: number) => EntityMatch[] {
  // Built once per assembly: every lookup of a request searches the same index.
  const fuse = new Fuse(entities, {
    keys: ["name"],
    includeScore: true,
    ignoreLocation: true,
    ignoreDiacritics: true,
    threshold: FUSE_THRESHOLD,
  });
  return (query, limit) => {
    if (query.trim() === "") {
      throw new DomainError("BAD_INPUT", "a lookup query is empty; look entities up by (part of) their name", { field: "lookups" });
    }
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new DomainError("BAD_INPUT", `the lookup limit must be a whole number, 1 or more, got ${limit}`, { field: "limit" });
    }
    return fuse.search(query.trim(), { limit }).map(({ item, score = 0 }) => {
      // Reported as similarity (1 = exact), rounded: the agent needs a rank, not noise.
      const similarity = Math.round((1 - score) * 1000) / 1000;
      return item.type === undefined
        ? { id: item.id, name: item.name, score: similarity }
        : { id: item.id, name: item.name, type: item.type, score: similarity };
    });
  };
}

function checkNow(now: Date): void {
  if (!(now instanceof Date) || Number.isNaN(now.getTime())) {
    throw new DomainError("BAD_INPUT", "now must be a valid Date", { field: "now" });
  }
}
