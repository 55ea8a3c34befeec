// Who owns each key of a thread's state, and whether a writer may change it.
// Every key has exactly one owner, resolved from the thread's declared rules.
import {
  OWNERS,
  ownershipOf,
  type KeyMatch,
  type KeyOwnership,
  type Owner,
  type OwnershipRule,
  type OwnershipRules,
} from "../../../sdk/src/thread-rules.ts";
import { DomainError } from "../errors.ts";
import { topLevelChanges, type KeyChange, type StateObject } from "./diff.ts";

// How a key's owner is resolved is shared with agents (the SDK strips an
// agent's scratch keys before saving, as the end of a request does here).
export {
  OWNERS,
  UNDECLARED_SHARED_PROTOCOL,
  ownerOf,
  ownershipOf,
  stripAgentKeys,
  type KeyMatch,
  type KeyOwnership,
  type Owner,
  type OwnershipRule,
  type OwnershipRules,
} from "../../../sdk/src/thread-rules.ts";

export type WriterKind = "agent" | "orchestrator" | "memory";
export type Writer = { kind: WriterKind };

/**
 * Refuses a save from `previous` to `next` that changes a key its writer may not
 * write; returns the top-level changes when every one is allowed. Removing an
 * AGENT key is allowed: it is what the end of a request does (stripAgentKeys).
 */
export function checkStateWrite(
  rules: OwnershipRules | null | undefined,
  previous: StateObject | null | undefined,
  next: StateObject | null | undefined,
  writer: Writer,
): KeyChange[] {
  const changes = topLevelChanges(previous, next);
  for (const { key, change } of changes) {
    const { owner } = ownershipOf(rules, key);
    const refusal = refusalFor(owner, writer.kind, change);
    if (refusal) {
      throw new DomainError("FORBIDDEN", `key "${key}" is owned by ${owner}; ${refusal}`, {
        key,
        owner,
        writer: writer.kind,
        change,
      });
    }
  }
  return changes;
}

/** The owner of every key found in any of the given versions, for the console's diff. */
export function annotateOwners(
  rules: OwnershipRules | null | undefined,
  ...states: (StateObject | null | undefined)[]
): Record<string, KeyOwnership> {
  const keys = new Set(states.flatMap((state) => (state ? Object.keys(state) : [])));
  return Object.fromEntries([...keys].sort().map((key) => [key, ownershipOf(rules, key)]));
}

/** Validates declared rules: an owner for each, SHARED with a protocol, no two rules for one key or prefix. */
export function parseOwnershipRules(value: unknown): OwnershipRules {
  if (!isObject(value) || !Array.isArray(value.rules)) {
    throw bad("ownership", 'ownership rules must be an object with a "rules" array, e.g. {"rules": [{"match": {"key": "route"}, "owner": "ORCHESTRATOR"}]}');
  }
  if (value.default !== undefined && !isOwner(value.default)) {
    throw bad("ownership.default", `ownership.default must be one of ${OWNERS.join(", ")}, got ${JSON.stringify(value.default)}`);
  }
  const claimed = new Map<string, number>();
  const rules = value.rules.map((raw: unknown, index): OwnershipRule => {
    const field = `ownership.rules[${index}]`;
    if (!isObject(raw)) throw bad(field, `${field} must be an object with "match" and "owner"`);
    const match = parseMatch(raw.match, `${field}.match`);
    if (!isOwner(raw.owner)) {
      throw bad(`${field}.owner`, `${field}.owner must be one of ${OWNERS.join(", ")}, got ${JSON.stringify(raw.owner)}`);
    }
    const protocol = raw.protocol;
    if (raw.owner === "SHARED" && (typeof protocol !== "string" || protocol.trim() === "")) {
      throw bad(`${field}.protocol`, `${field} makes ${describeMatch(match)} SHARED without a protocol; declare how writers share it, e.g. "protocol": "append-only"`);
    }
    if (raw.owner !== "SHARED" && protocol !== undefined) {
      throw bad(`${field}.protocol`, `${field} declares a protocol for a ${raw.owner} key; only SHARED keys take a protocol, remove it`);
    }
    const claim = describeMatch(match);
    const earlier = claimed.get(claim);
    if (earlier !== undefined) {
      throw bad(field, `${field} and ownership.rules[${earlier}] both claim ${claim}; keep one rule per key or prefix`);
    }
    claimed.set(claim, index);
    return raw.owner === "SHARED" ? { match, owner: raw.owner, protocol: protocol as string } : { match, owner: raw.owner };
  });
  return value.default === undefined ? { rules } : { rules, default: value.default as Owner };
}

function refusalFor(owner: Owner, writer: WriterKind, change: KeyChange["change"]): string | null {
  switch (owner) {
    case "AGENT":
      if (change === "removed") return null;
      return `${WRITER_NAMES[writer]} may not write it into saved state: AGENT keys are request-scoped and are dropped at request end; save stripAgentKeys(state) instead`;
    case "MEMORY":
      return writer === "memory" ? null : `${WRITER_NAMES[writer]} may not write it; change it through the memory API`;
    case "ORCHESTRATOR":
      return writer === "orchestrator" ? null : `${WRITER_NAMES[writer]} may not write it; only orchestrators write it, agents read it`;
    case "SHARED":
      return null;
  }
}

const WRITER_NAMES: Record<WriterKind, string> = {
  agent: "an agent",
  orchestrator: "an orchestrator",
  memory: "the memory API",
};

function parseMatch(value: unknown, field: string): KeyMatch {
  if (!isObject(value)) throw bad(field, `${field} must be {"key": "..."} or {"prefix": "..."}`);
  const hasKey = Object.hasOwn(value, "key");
  const hasPrefix = Object.hasOwn(value, "prefix");
  if (hasKey === hasPrefix) {
    throw bad(field, `${field} must have exactly one of "key" or "prefix"`);
  }
  const text = hasKey ? value.key : value.prefix;
  const name = hasKey ? "key" : "prefix";
  if (typeof text !== "string" || text === "") {
    // An empty prefix would match every key: that is what `default` is for.
    throw bad(`${field}.${name}`, `${field}.${name} must be a non-empty string${hasPrefix ? '; use "default" to set the owner of every other key' : ""}`);
  }
  return hasKey ? { key: text } : { prefix: text };
}

function describeMatch(match: KeyMatch): string {
  return "key" in match ? `key "${match.key}"` : `prefix "${match.prefix}"`;
}

function isOwner(value: unknown): value is Owner {
  return typeof value === "string" && (OWNERS as readonly string[]).includes(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function bad(field: string, message: string): DomainError {
  return new DomainError("BAD_INPUT", message, { field });
}
