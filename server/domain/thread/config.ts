// A thread's configuration: which tools its agent may use and other per-thread
// settings, validated once on the way in and read through small, total helpers.
import type { ThreadConfig } from "../../../sdk/src/thread-rules.ts";
import { DomainError } from "../errors.ts";
import { LIMITS, jsonSize } from "../json.ts";

// The config's lookups are shared with agents, through the SDK.
export { getConfigValue, isToolEnabled, type ThreadConfig } from "../../../sdk/src/thread-rules.ts";

/**
 * Gating question: may a tool call go ahead as far as the config is concerned?
 * The API contract is "no enabledTools = no tool restriction", so only a present
 * list that lacks the tool refuses it.
 */
export function toolAllowedByConfig(config: ThreadConfig | null | undefined, tool: string): boolean {
  const enabled = config?.enabledTools;
  return enabled === undefined ? true : enabled.includes(tool);
}

export function parseThreadConfig(value: unknown): ThreadConfig {
  if (!isPlainObject(value)) {
    throw new DomainError(
      "BAD_INPUT",
      `thread config must be a JSON object, got ${describe(value)}; send an object such as {"enabledTools": ["search"]}`,
      { field: "config" },
    );
  }
  const problem = findNonJson(value, "config", new Set());
  if (problem) throw new DomainError("BAD_INPUT", problem.message, { field: problem.field });

  const size = jsonSize(value);
  if (size > LIMITS.configBytes) {
    throw new DomainError(
      "PAYLOAD_TOO_LARGE",
      `thread config is ${size} bytes, over the ${LIMITS.configBytes}-byte limit; keep large data out of the config`,
      { field: "config", size, limit: LIMITS.configBytes },
    );
  }

  if (Object.hasOwn(value, "enabledTools")) checkEnabledTools(value.enabledTools);
  return value as ThreadConfig;
}

function checkEnabledTools(tools: unknown): void {
  if (!Array.isArray(tools)) {
    throw new DomainError(
      "BAD_INPUT",
      `config.enabledTools must be an array of tool names, got ${describe(tools)}; leave it out to allow every tool`,
      { field: "config.enabledTools" },
    );
  }
  const seenAt = new Map<string, number>();
  tools.forEach((tool: unknown, index) => {
    const field = `config.enabledTools[${index}]`;
    if (typeof tool !== "string" || tool.trim() === "") {
      throw new DomainError(
        "BAD_INPUT",
        `${field} must be a non-empty tool name, got ${describe(tool)}`,
        { field },
      );
    }
    const first = seenAt.get(tool);
    if (first !== undefined) {
      throw new DomainError(
        "BAD_INPUT",
        `config.enabledTools lists "${tool}" twice (at ${first} and ${index}); list each tool once`,
        { field },
      );
    }
    seenAt.set(tool, index);
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The first value that would not survive a JSON round trip unchanged, with its path. */
function findNonJson(value: unknown, path: string, ancestors: Set<object>): { field: string; message: string } | null {
  if (value === null || typeof value === "string" || typeof value === "boolean") return null;
  if (typeof value === "number") {
    return Number.isFinite(value) ? null : { field: path, message: `${path} is ${value}, which JSON cannot carry; use a finite number or null` };
  }
  if (typeof value !== "object") {
    return { field: path, message: `${path} is ${describe(value)}, which is not a JSON value` };
  }
  if (!Array.isArray(value) && !isPlainObject(value)) {
    return { field: path, message: `${path} is ${describe(value)}, not a plain JSON object; send strings, numbers, booleans, arrays and objects only` };
  }
  if (ancestors.has(value)) return { field: path, message: `${path} refers back to itself; JSON cannot carry cycles` };
  ancestors.add(value);
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((item, index) => [`${path}[${index}]`, item])
    : Object.entries(value).map(([key, item]) => [`${path}.${key}`, item]);
  for (const [childPath, item] of entries) {
    const problem = findNonJson(item, childPath, ancestors);
    if (problem) return problem;
  }
  ancestors.delete(value);
  return null;
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return `an object of type ${value.constructor?.name ?? "unknown"}`;
  if (typeof value === "string") return JSON.stringify(value);
  return `${typeof value} ${String(value)}`;
}
