// A thread's rules as agents and the server both read them: which owner a state
// key has (so the SDK strips an agent's scratch keys before saving, as the
// server does at the end of a request) and the config's lookups. Pure, and
// shared with the server, so the two can never disagree.

/**
 * AGENT: request-scoped scratch, dropped when the request ends, never persisted.
 * MEMORY: persistent, changed only through the memory API.
 * ORCHESTRATOR: trace and routing context written by orchestrators, read-only to agents.
 * SHARED: written by agents and orchestrators alike, following a declared protocol.
 */
export const OWNERS = ["AGENT", "MEMORY", "ORCHESTRATOR", "SHARED"] as const;
export type Owner = (typeof OWNERS)[number];

export type KeyMatch = { key: string } | { prefix: string };
export type OwnershipRule = { match: KeyMatch; owner: Owner; protocol?: string };
export type OwnershipRules = { rules: OwnershipRule[]; default?: Owner };
export type KeyOwnership = { owner: Owner; protocol?: string };
export type StateObject = Record<string, unknown>;
export type ThreadConfig = { enabledTools?: string[]; [key: string]: unknown };

/**
 * The protocol of SHARED keys that no rule declares (the built-in fallback, or a
 * `default: "SHARED"`): whoever saves last wins, as with any undeclared field.
 */
export const UNDECLARED_SHARED_PROTOCOL = "last-write-wins";

const NO_RULES: OwnershipRules = { rules: [] };

/**
 * Resolution order, first hit wins:
 * 1. a rule matching the exact key;
 * 2. the rule with the longest matching prefix;
 * 3. the convention that a key starting with "_" is AGENT scratch;
 * 4. the rules' `default`, else SHARED under UNDECLARED_SHARED_PROTOCOL.
 * Explicit rules beat the underscore convention so a thread can claim "_trace"
 * for its orchestrator.
 */
export function ownershipOf(rules: OwnershipRules | null | undefined, key: string): KeyOwnership {
  const declared = rules ?? NO_RULES;
  const exact = declared.rules.find((rule) => "key" in rule.match && rule.match.key === key);
  if (exact) return fromRule(exact);

  let best: OwnershipRule | undefined;
  let bestLength = -1;
  for (const rule of declared.rules) {
    if ("prefix" in rule.match && key.startsWith(rule.match.prefix) && rule.match.prefix.length > bestLength) {
      best = rule;
      bestLength = rule.match.prefix.length;
    }
  }
  if (best) return fromRule(best);

  if (key.startsWith("_")) return { owner: "AGENT" };
  const owner = declared.default ?? "SHARED";
  return owner === "SHARED" ? { owner, protocol: UNDECLARED_SHARED_PROTOCOL } : { owner };
}

export function ownerOf(rules: OwnershipRules | null | undefined, key: string): Owner {
  return ownershipOf(rules, key).owner;
}

/** What the end of a request persists: the state without its AGENT-owned keys. */
export function stripAgentKeys(rules: OwnershipRules | null | undefined, state: StateObject): StateObject {
  return Object.fromEntries(Object.entries(state).filter(([key]) => ownerOf(rules, key) !== "AGENT"));
}

function fromRule(rule: OwnershipRule): KeyOwnership {
  return rule.protocol === undefined ? { owner: rule.owner } : { owner: rule.owner, protocol: rule.protocol };
}

/**
 * Strict question: is the tool explicitly enabled? False when the config is
 * missing, when it has no enabledTools list, or when the list lacks the tool.
 * (The server's gate asks the looser toolAllowedByConfig.)
 */
export function isToolEnabled(config: ThreadConfig | null | undefined, tool: string): boolean {
  return config?.enabledTools?.includes(tool) ?? false;
}

/**
 * Top-level keys only: "a.b" names a key that contains a dot, it is not a path,
 * because config keys are caller-chosen and may contain dots. Inherited
 * properties ("constructor", "toString") are not config values.
 */
export function getConfigValue(config: ThreadConfig | null | undefined, key: string): unknown {
  if (!config || !Object.hasOwn(config, key)) return undefined;
  return config[key];
}
