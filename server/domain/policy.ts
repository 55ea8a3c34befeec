// Policy rules: which call a rule matches, in which order rules apply, and the
// gate that results once what the agent asked for is folded in. Pure: the
// services load rules, compile them once per change, and apply the result.
import type { Route } from "./routing.ts";
import { dequal } from "dequal";
import picomatch from "picomatch";
import { RE2JS } from "re2js";
import { DomainError } from "./errors.ts";
import { parseJsonPath, type PathSegment } from "./json-path.ts";
import { comparableName } from "./names.ts";
import type { DecisionAction, TimeoutOutcome } from "./lifecycle.ts";
import type { OperatorRoleName } from "./principal.ts";
import type { ToolAnnotations } from "./risk.ts";
import { hintOf, HINTS, safetyClaims, type HintMatch } from "./tool-pins.ts";

import { CONDITION_OPS, type ConditionOp } from "./policy-terms.ts";
export { CONDITION_OPS, LAST_PRIORITY, type ConditionOp } from "./policy-terms.ts";

/** One test on a JSON value: `$.amount gt 1000`, `$.to matches @example\.com$`, `$.cc exists`. */
export interface Condition {
  path: string;
  op: ConditionOp;
  value?: unknown;
}

export interface PolicyMatch {
  /** Glob on the task's agent name (`*`, `billing-*`). */
  agent?: string;
  /** Glob on the tool name. */
  tool?: string;
  /** The agent key (id) that asks. */
  agentKeyId?: string;
  /** One session only (remembered "in this session" rules). */
  sessionId?: string;
  /** Conditions on the session's metadata. */
  session?: Condition[];
  /** Conditions on the call's arguments; all must hold. */
  args?: Condition[];
  /**
   * The tool's MCP hints, each as the call's annotations give it or MCP's
   * default where they say nothing. A hint that claims safety (readOnlyHint
   * true, destructiveHint false, ...) is allowed only with `pinned`.
   */
  annotations?: HintMatch;
  /** Only calls whose tool definition an admin has pinned (unchanged since). */
  pinned?: boolean;
}

export type PolicyOutcome = "approve" | "reject" | "require";

export interface PolicyRule {
  id: string;
  name: string;
  version: number;
  priority: number;
  enabled: boolean;
  /** A remembered decision: sorts before written rules of the same priority. */
  remembered: boolean;
  createdAt: Date;
  expiresAt: Date | null;
  match: PolicyMatch;
  outcome: PolicyOutcome;
  message: string | null;
  role: Exclude<OperatorRoleName, "VIEWER">;
  approvers: number;
  /** Allowed actions for a person; empty means all. */
  allow: DecisionAction[];
  timeoutMs: number | null;
  onTimeout: Exclude<TimeoutOutcome, "approve">;
  allowApproveOnTimeout: boolean;
  /** Who a person-deciding rule asks, its escalation and reminder. */
  route: Route | null;
  /** What the console shows on a matched call: a risk label, and the argument paths ($.query) to highlight. */
  riskLabel: string | null;
  riskPaths: string[];
}

/** What is known about a call when approval.request evaluates it (names exactly as the agent gave them). */
export interface CallFacts {
  agent: string;
  tool: string;
  agentKeyId: string | null;
  sessionId: string | null;
  sessionMetadata: unknown;
  args: unknown;
  /** The tool's MCP annotations the call came with, if any. */
  annotations?: ToolAnnotations | null;
  /** Whether the tool definition the call came with is pinned for its agent and tool. */
  pinned?: boolean;
}

// ---- JSON paths --------------------------------------------------------------

export { parseJsonPath, type PathSegment } from "./json-path.ts";

function valueAt(root: unknown, segments: readonly PathSegment[]): { found: boolean; value?: unknown } {
  let current = root;
  for (const segment of segments) {
    if (typeof segment === "number") {
      if (!Array.isArray(current) || segment >= current.length) return { found: false };
      current = current[segment];
    } else {
      if (current === null || typeof current !== "object" || Array.isArray(current) || !Object.hasOwn(current, segment)) return { found: false };
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return { found: true, value: current };
}

// ---- Compiling ---------------------------------------------------------------

interface CompiledCondition {
  source: Condition;
  test(root: unknown): boolean;
}

export interface CompiledRule {
  rule: PolicyRule;
  agent: ((name: string) => boolean) | null;
  tool: ((name: string) => boolean) | null;
  session: CompiledCondition[];
  args: CompiledCondition[];
}

// bash: `*` also crosses "/" and ".", so "mcp/*" and "db.*" read as people expect.
const GLOB_OPTIONS = { bash: true, dot: true } as const;

/** Matches names in the form rules compare (comparableName), as the glob is written in it. */
function compileGlob(field: string, glob: string): (name: string) => boolean {
  if (!glob.trim()) throw new DomainError("BAD_INPUT", `${field} must be a glob such as "send_*" or "*", not empty`);
  return picomatch(comparableName(glob), GLOB_OPTIONS);
}

/**
 * A match with its agent and tool globs in the form names are compared in
 * (NFKC, case-folded), as rules are stored: what the console shows is what
 * matches.
 */
export function comparableMatch(match: PolicyMatch): PolicyMatch {
  return {
    ...match,
    ...(match.agent !== undefined ? { agent: comparableName(match.agent) } : {}),
    ...(match.tool !== undefined ? { tool: comparableName(match.tool) } : {}),
  };
}

/** Numbers compare as numbers (numeric strings too, as models often send them); strings compare as text. */
function comparable(actual: unknown, expected: unknown): [number, number] | [string, string] | null {
  const asNumber = (value: unknown) =>
    typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value)) ? Number(value) : null;
  if (typeof expected === "number") {
    const number = asNumber(actual);
    return number === null ? null : [number, expected];
  }
  if (typeof expected === "string" && typeof actual === "string") return [actual, expected];
  return null;
}

const ORDER_TESTS = {
  lt: (a: number | string, b: number | string) => a < b,
  lte: (a: number | string, b: number | string) => a <= b,
  gt: (a: number | string, b: number | string) => a > b,
  gte: (a: number | string, b: number | string) => a >= b,
} as const;

/** Compiles one condition; a malformed one is a BAD_INPUT naming `field`. */
export function compileCondition(field: string, condition: Condition): CompiledCondition {
  const segments = parseJsonPath(condition.path);
  const bad = (why: string) => new DomainError("BAD_INPUT", `${field} (${condition.path} ${condition.op}): ${why}`);
  const { op, value } = condition;
  let testValue: (actual: unknown) => boolean;
  switch (op) {
    case "exists": {
      if (value !== undefined && typeof value !== "boolean") throw bad("value must be true, false or left out (true)");
      const wanted = value ?? true;
      return { source: condition, test: (root) => valueAt(root, segments).found === wanted };
    }
    case "eq":
    case "neq":
      if (value === undefined) throw bad("needs a value to compare with");
      testValue = op === "eq" ? (actual) => dequal(actual, value) : (actual) => !dequal(actual, value);
      break;
    case "lt":
    case "lte":
    case "gt":
    case "gte": {
      if (typeof value !== "number" && typeof value !== "string") throw bad("value must be a number or a string");
      const order = ORDER_TESTS[op];
      testValue = (actual) => {
        const pair = comparable(actual, value);
        return pair !== null && order(pair[0], pair[1]);
      };
      break;
    }
    case "in": {
      if (!Array.isArray(value) || value.length === 0) throw bad("value must be a non-empty array of the allowed values");
      testValue = (actual) => value.some((candidate) => dequal(actual, candidate));
      break;
    }
    case "matches": {
      if (typeof value !== "string" || value.length === 0) throw bad("value must be a regular expression as a string");
      if (value.length > 1000) throw bad("the regular expression may be at most 1000 characters");
      let pattern: RE2JS;
      try {
        // RE2 runs in time linear in the input: no rule can hang the server.
        pattern = RE2JS.compile(value);
      } catch (error) {
        throw bad(`not a valid regular expression (RE2 syntax, no backreferences or lookaround): ${(error as Error).message}`);
      }
      testValue = (actual) => typeof actual === "string" && pattern.matcher(actual).find();
      break;
    }
    default:
      throw bad(`unknown operator; use one of ${CONDITION_OPS.join(", ")}`);
  }
  // Every operator but exists needs the value to be there: a missing argument never satisfies a rule.
  return {
    source: condition,
    test(root) {
      const found = valueAt(root, segments);
      return found.found && testValue(found.value);
    },
  };
}

/** Compiles a rule's match; throws BAD_INPUT naming the field that is wrong. */
export function compileRule(rule: PolicyRule): CompiledRule {
  const { match } = rule;
  const claims = safetyClaims(match.annotations ?? {});
  if (claims.length > 0 && !match.pinned) {
    // A server says what it likes about its tools: its claim of safety decides nothing until an admin has pinned the tool.
    throw new DomainError(
      "BAD_INPUT",
      `match.annotations: ${claims.map((hint) => `${hint}: ${String(match.annotations![hint])}`).join(", ")} is the MCP server's own claim that the tool is safe; a rule may rely on it only for pinned tools (add "pinned": true)`,
      { field: "match.annotations" },
    );
  }
  return {
    rule,
    agent: match.agent ? compileGlob("match.agent", match.agent) : null,
    tool: match.tool ? compileGlob("match.tool", match.tool) : null,
    session: (match.session ?? []).map((condition, index) => compileCondition(`match.session[${index}]`, condition)),
    args: (match.args ?? []).map((condition, index) => compileCondition(`match.args[${index}]`, condition)),
  };
}

/** Evaluation order: priority, then remembered rules before written ones, then the older first. */
export function compareRules(a: PolicyRule, b: PolicyRule): number {
  return a.priority - b.priority || Number(b.remembered) - Number(a.remembered) || a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1);
}

export interface PolicySet {
  rules: CompiledRule[];
}

export function compilePolicySet(rules: PolicyRule[]): PolicySet {
  return { rules: [...rules].sort(compareRules).map(compileRule) };
}

// ---- Evaluating --------------------------------------------------------------

export interface RuleVerdict {
  policyId: string;
  name: string;
  matched: boolean;
  /** Why it matched, or the first reason it did not. */
  reason: string;
}

/** The call's agent and tool in the form rules compare. */
interface ComparedNames {
  agent: string;
  tool: string;
}

/**
 * The first reason a rule does not match a call, or null when it matches. The
 * reason is described only when asked for (an explanation), so evaluating a
 * call against rules that do not match it builds no text.
 */
function firstMismatch(compiled: CompiledRule, facts: CallFacts, names: ComparedNames, now: Date): (() => string) | null {
  const { rule } = compiled;
  const { expiresAt } = rule;
  if (!rule.enabled) return () => "disabled";
  if (expiresAt && expiresAt <= now) return () => `expired at ${expiresAt.toISOString()}`;
  if (compiled.agent && !compiled.agent(names.agent)) return () => `agent "${facts.agent}" does not match "${rule.match.agent}"`;
  if (compiled.tool && !compiled.tool(names.tool)) return () => `tool "${facts.tool}" does not match "${rule.match.tool}"`;
  if (rule.match.agentKeyId && rule.match.agentKeyId !== facts.agentKeyId) return () => `asked with another agent key than ${rule.match.agentKeyId}`;
  if (rule.match.sessionId && rule.match.sessionId !== facts.sessionId) return () => `only for session ${rule.match.sessionId}`;
  const session = compiled.session.find((condition) => !condition.test(facts.sessionMetadata));
  if (session) return () => `session metadata: ${describeCondition(session.source)} does not hold`;
  const args = compiled.args.find((condition) => !condition.test(facts.args));
  if (args) return () => `arguments: ${describeCondition(args.source)} does not hold`;
  if (rule.match.pinned && !facts.pinned) return () => `tool "${facts.tool}" is not pinned for agent "${facts.agent}", or its definition changed since it was pinned`;
  const wanted = rule.match.annotations ?? {};
  const hint = HINTS.find((name) => wanted[name] !== undefined && hintOf(facts.annotations, name) !== wanted[name]);
  if (hint) return () => `annotations: ${hint} is ${String(hintOf(facts.annotations, hint))}${facts.annotations?.[hint] === undefined ? " (not said: MCP's default)" : ""}, not ${String(wanted[hint])}`;
  return null;
}

export function describeCondition(condition: Condition): string {
  return condition.op === "exists" && condition.value === false
    ? `${condition.path} is absent`
    : condition.op === "exists"
      ? `${condition.path} exists`
      : `${condition.path} ${condition.op} ${JSON.stringify(condition.value)}`;
}

function describeMatch(rule: PolicyRule): string {
  const parts = [
    rule.match.agent ? `agent ${rule.match.agent}` : null,
    rule.match.tool ? `tool ${rule.match.tool}` : null,
    rule.match.agentKeyId ? `key ${rule.match.agentKeyId}` : null,
    rule.match.sessionId ? `session ${rule.match.sessionId}` : null,
    ...(rule.match.session ?? []).map((condition) => `session ${describeCondition(condition)}`),
    ...(rule.match.args ?? []).map(describeCondition),
    rule.match.pinned ? "pinned tools" : null,
    ...HINTS.filter((name) => rule.match.annotations?.[name] !== undefined).map((name) => `${name} ${String(rule.match.annotations![name])}`),
  ].filter(Boolean);
  return parts.length ? `matches ${parts.join(", ")}` : "matches every call";
}

export interface Evaluation {
  rule: PolicyRule | null;
  /** The rules looked at, in order, up to and including the one that matched. */
  trail: RuleVerdict[];
}

/** The first rule that matches the call, with the reasons for every rule before it. */
export function evaluatePolicies(set: PolicySet, facts: CallFacts, now: Date, options: { explain?: boolean } = {}): Evaluation {
  const trail: RuleVerdict[] = [];
  const names = { agent: comparableName(facts.agent), tool: comparableName(facts.tool) };
  for (const compiled of set.rules) {
    const mismatch = firstMismatch(compiled, facts, names, now);
    const { rule } = compiled;
    if (options.explain) trail.push({ policyId: rule.id, name: rule.name, matched: mismatch === null, reason: mismatch ? mismatch() : describeMatch(rule) });
    if (mismatch === null) return { rule, trail };
  }
  return { rule: null, trail };
}

// ---- The resulting gate --------------------------------------------------------

export interface WorkspaceDefaultGate {
  timeoutMs: number | null;
  onTimeout: Exclude<TimeoutOutcome, "approve">;
}

/** What the agent asked for in approval.request: it may only make the gate stricter. */
export interface AgentAsk {
  allow?: DecisionAction[];
  timeoutMs?: number;
  onTimeout?: TimeoutOutcome;
}

export type Gate =
  | { kind: "approve" | "reject"; rule: PolicyRule; message: string | null }
  | {
      kind: "require";
      rule: PolicyRule | null;
      role: Exclude<OperatorRoleName, "VIEWER">;
      approvers: number;
      allow: DecisionAction[];
      timeoutMs: number | null;
      onTimeout: TimeoutOutcome;
    };

const ALL: readonly DecisionAction[] = ["approve", "reject", "edit", "respond"];

/**
 * The gate for a call: the matched rule (or the workspace default) narrowed by
 * what the agent asked. The agent may shorten the timeout, drop actions and
 * choose between the fail-closed defaults; it can never remove reject, and it
 * may ask for onTimeout "approve" only where an admin's rule allows it.
 */
export function gateFor(rule: PolicyRule | null, defaults: WorkspaceDefaultGate, ask: AgentAsk, tool: string): Gate {
  if (rule && rule.outcome !== "require") return { kind: rule.outcome, rule, message: rule.message };
  if (ask.onTimeout === "approve" && !rule?.allowApproveOnTimeout) {
    throw new DomainError(
      "FORBIDDEN",
      `onTimeout "approve" is not allowed for tool "${tool}": ${rule ? `policy "${rule.name}"` : "the workspace default"} does not let agents approve by timeout; an admin can allow it on a policy rule, or ask with onTimeout "reject"`,
    );
  }
  const approvers = rule?.approvers ?? 1;
  const permitted = rule && rule.allow.length > 0 ? rule.allow : ALL;
  let allow = ALL.filter((action) => permitted.includes(action) && (!ask.allow || ask.allow.includes(action)));
  // Several approvers agree on the proposed arguments: an edit would change what the others approved,
  // and one person's free-text answer would end what the others were asked to agree on.
  if (approvers > 1) allow = allow.filter((action) => action !== "edit" && action !== "respond");
  // A person can always say no.
  if (!allow.includes("reject")) allow = [...allow, "reject"];
  const ruleTimeout = rule ? rule.timeoutMs : defaults.timeoutMs;
  const timeouts = [ruleTimeout, ask.timeoutMs ?? null].filter((value): value is number => value !== null);
  return {
    kind: "require",
    rule,
    role: rule?.role ?? "OPERATOR",
    approvers,
    allow,
    timeoutMs: timeouts.length ? Math.min(...timeouts) : null,
    onTimeout: ask.onTimeout ?? rule?.onTimeout ?? defaults.onTimeout,
  };
}

/**
 * The rule that matched a question or a form, as it applies to one: its reject
 * outcome, role, route and timeout hold, but nothing answers for a person (an
 * "approve" rule still puts it before one, never approving by timeout), and
 * one person answers (a quorum cannot agree on free text or filled-in values).
 * An answer carries no receipt, so no tool runs on its authority.
 */
export function ruleForAnswer(rule: PolicyRule | null): PolicyRule | null {
  if (!rule) return null;
  return { ...rule, outcome: rule.outcome === "reject" ? "reject" : "require", approvers: 1, allow: [], allowApproveOnTimeout: false };
}

const ROLE_RANK: Record<OperatorRoleName, number> = { VIEWER: 0, OPERATOR: 1, ADMIN: 2 };

/** Whether an operator's role is at least the role a gate requires. */
export function hasRole(role: OperatorRoleName, required: OperatorRoleName): boolean {
  return ROLE_RANK[role] >= ROLE_RANK[required];
}

/** A glob that matches exactly this name, for remembered rules. */
export function exactGlob(name: string): string {
  return name.replace(/[\\*?[\]{}()!+@|,]/g, (character) => `\\${character}`);
}
