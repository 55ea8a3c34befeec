// The rule editor's state and the checks it runs before saving. The checks are
// the server's own: the request schema from the policy router and the domain's
// compiler for JSON paths and RE2 expressions, so the editor refuses exactly
// what the server would refuse, with the same words, next to the field.
import type { z } from "zod";
import { CONDITION_OPS, compileCondition, compileRule, LAST_PRIORITY, parseJsonPath, type ConditionOp, type PolicyRule } from "@/server/domain/policy";
import { HINTS, type Hint, type HintMatch } from "@/server/domain/tool-pins";
import { zPolicyInput } from "@/server/api/routers/policy.types";
import type { DecisionAction } from "@/lib/types";
import { durationFromMs, durationToMs, type DurationText } from "./duration";
import { routeFormFrom, routeFromForm, type Route, type RouteForm } from "../notifications/route-form";

export { CONDITION_OPS, HINTS, LAST_PRIORITY, type ConditionOp, type Hint, type HintMatch };

export type PolicyInput = z.input<typeof zPolicyInput>;
export type Outcome = "approve" | "reject" | "require";
export const ACTIONS: readonly DecisionAction[] = ["approve", "reject", "edit", "respond"];

export interface ConditionRow {
  /** Stable React key for the row. */
  key: string;
  path: string;
  op: ConditionOp;
  /** The value as typed: JSON where it parses, otherwise plain text. */
  value: string;
}

export interface RuleForm {
  name: string;
  description: string;
  /** Empty: a new rule goes after the last written rule; an edited one keeps its place. */
  priority: string;
  enabled: boolean;
  agent: string;
  tool: string;
  agentKeyId: string;
  sessionId: string;
  args: ConditionRow[];
  session: ConditionRow[];
  /** MCP tools an admin pinned only (their definition unchanged since). */
  pinned: boolean;
  /** The MCP hints the call's tool must give (a missing hint is MCP's default). */
  annotations: HintMatch;
  outcome: Outcome;
  message: string;
  role: "OPERATOR" | "ADMIN";
  approvers: string;
  /** What a person may do; reject is always among them. */
  allow: DecisionAction[];
  timeout: DurationText;
  onTimeout: "reject" | "cancel";
  allowApproveOnTimeout: boolean;
  /** Who a person-deciding rule asks, its escalation and reminder. */
  route: RouteForm;
  /** A datetime-local value, or empty for no expiry. */
  expiresAt: string;
  /** Shown to reviewers of the calls the rule matches. */
  riskLabel: string;
  /** Argument paths to highlight, one a line. */
  riskPaths: string;
}

/** Errors by field: `name`, `match.tool`, `match.args.0`, `timeoutMs`, ... and `form` for the rest. */
export type FieldErrors = Record<string, string>;

/** The fields a rule is read back from (policy.list's items). */
export interface StoredRule {
  name: string;
  description: string | null;
  priority: number;
  enabled: boolean;
  match: {
    agent?: string;
    tool?: string;
    agentKeyId?: string;
    sessionId?: string;
    session?: { path: string; op: ConditionOp; value?: unknown }[];
    args?: { path: string; op: ConditionOp; value?: unknown }[];
    annotations?: HintMatch;
    pinned?: boolean;
  };
  outcome: Outcome;
  message: string | null;
  role: "OPERATOR" | "ADMIN";
  approvers: number;
  allow: DecisionAction[];
  timeoutMs: number | null;
  onTimeout: "reject" | "cancel";
  allowApproveOnTimeout: boolean;
  route?: Route | null;
  expiresAt: string | null;
  riskLabel?: string | null;
  riskPaths?: string[];
}

let rowCounter = 0;
const rowKey = () => `row-${++rowCounter}`;

export function emptyCondition(): ConditionRow {
  return { key: rowKey(), path: "$.", op: "eq", value: "" };
}

export function emptyForm(): RuleForm {
  return {
    name: "",
    description: "",
    priority: "",
    enabled: true,
    agent: "",
    tool: "",
    agentKeyId: "",
    sessionId: "",
    args: [],
    session: [],
    pinned: false,
    annotations: {},
    outcome: "require",
    message: "",
    role: "OPERATOR",
    approvers: "1",
    allow: [...ACTIONS],
    timeout: durationFromMs(null),
    onTimeout: "reject",
    allowApproveOnTimeout: false,
    route: routeFormFrom(null),
    expiresAt: "",
    riskLabel: "",
    riskPaths: "",
  };
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * A condition's value as it is typed: `42` is a number, `"42"` the string,
 * `["a","b"]` a list, and text that is not JSON is a string as written, so
 * `ada@example.com` needs no quotes. A regular expression is always text.
 */
export function valueFromText(op: ConditionOp, text: string): unknown {
  if (op === "exists") return text === "absent" ? false : undefined;
  if (op === "matches") return text;
  const trimmed = text.trim();
  if (!trimmed) return undefined;
  return parsesAsJson(trimmed) ? JSON.parse(trimmed) : text;
}

/** The inverse of valueFromText: what to show in the field for a stored value. */
export function valueToText(op: ConditionOp, value: unknown): string {
  if (op === "exists") return value === false ? "absent" : "present";
  if (value === undefined) return "";
  if (typeof value === "string" && (op === "matches" || !parsesAsJson(value.trim()))) return value;
  return JSON.stringify(value);
}

/** A Date as the value of an <input type="datetime-local" step="1"> in local time, to the second. */
export function toLocalInput(iso: string | null): string {
  if (!iso) return "";
  const date = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

export function formFromRule(rule: StoredRule): RuleForm {
  const rows = (conditions: StoredRule["match"]["args"]) =>
    (conditions ?? []).map((condition) => ({ key: rowKey(), path: condition.path, op: condition.op, value: valueToText(condition.op, condition.value) }));
  return {
    name: rule.name,
    description: rule.description ?? "",
    // Remembered rules placed after every written rule have a priority no one can write: keep it by sending none.
    priority: rule.priority >= LAST_PRIORITY ? "" : String(rule.priority),
    enabled: rule.enabled,
    agent: rule.match.agent ?? "",
    tool: rule.match.tool ?? "",
    agentKeyId: rule.match.agentKeyId ?? "",
    sessionId: rule.match.sessionId ?? "",
    args: rows(rule.match.args),
    session: rows(rule.match.session),
    pinned: rule.match.pinned === true,
    annotations: { ...rule.match.annotations },
    outcome: rule.outcome,
    message: rule.message ?? "",
    role: rule.role,
    approvers: String(rule.approvers),
    allow: rule.allow.length ? ACTIONS.filter((action) => action === "reject" || rule.allow.includes(action)) : [...ACTIONS],
    timeout: durationFromMs(rule.timeoutMs),
    onTimeout: rule.onTimeout,
    allowApproveOnTimeout: rule.allowApproveOnTimeout,
    route: routeFormFrom(rule.route),
    expiresAt: toLocalInput(rule.expiresAt),
    riskLabel: rule.riskLabel ?? "",
    riskPaths: (rule.riskPaths ?? []).join("\n"),
  };
}

/** A server or schema path (`match.args[0].value`, `match.args.0.path`) as the editor's field key. */
export function fieldKey(path: string): string {
  const parts = path.replace(/\[(\d+)\]/g, ".$1").split(".").filter(Boolean);
  if (parts[0] === "match" && (parts[1] === "args" || parts[1] === "session") && parts[2] !== undefined && /^\d+$/.test(parts[2])) {
    return parts.slice(0, 3).join(".");
  }
  if (parts[0] === "match" && parts[1]) return `match.${parts[1]}`;
  if (parts[0] === "draft") return fieldKey(parts.slice(1).join("."));
  return parts[0] ?? "form";
}

const KNOWN_FIELDS = /^(name|description|priority|enabled|message|role|approvers|allow|timeoutMs|onTimeout|allowApproveOnTimeout|expiresAt|route|riskLabel|riskPaths|match(?:\.\w+)?(?:\[\d+\]|\.\d+)?)\b/;

/**
 * Places a 400 from the server next to the field it names. The server says
 * `invalid input: match.tool: ...; name: ...` for schema errors and
 * `match.args[0] ($.to matches ...): ...` or `message: ...` for rule checks.
 */
export function errorsFromServer(message: string, form?: Pick<RuleForm, "args" | "session">): FieldErrors {
  const errors: FieldErrors = {};
  const body = message.replace(/^invalid input:\s*/, "");
  const parts = message.startsWith("invalid input:") ? body.split("; ") : [body];
  for (const part of parts) {
    const named = /^((?:draft\.)?[\w.[\]]+?)(?::\s|\s\(|\smust\s)/.exec(part);
    const path = named?.[1];
    let key = path && KNOWN_FIELDS.test(path.replace(/^draft\./, "")) ? fieldKey(path) : "form";
    // A malformed JSON path is named by its text, not its place: find the row that has it.
    const badPath = /^path "((?:[^"\\]|\\.)*)"/.exec(part)?.[1];
    if (key === "form" && badPath !== undefined && form) {
      const at = (field: "args" | "session") => form[field].findIndex((row) => row.path.trim() === badPath);
      if (at("args") >= 0) key = `match.args.${at("args")}`;
      else if (at("session") >= 0) key = `match.session.${at("session")}`;
    }
    errors[key] = errors[key] ? `${errors[key]}; ${part}` : part;
  }
  return errors;
}

function conditionsOf(rows: ConditionRow[], field: "args" | "session", errors: FieldErrors) {
  return rows.map((row, index) => {
    const condition = { path: row.path.trim(), op: row.op, ...(valueFromText(row.op, row.value) !== undefined ? { value: valueFromText(row.op, row.value) } : {}) };
    try {
      compileCondition(`match.${field}[${index}]`, condition);
    } catch (error) {
      errors[`match.${field}.${index}`] = (error as Error).message;
    }
    return condition;
  });
}

/**
 * The request for policy.create or policy.update, or the errors that stop it.
 * Every field is sent, so an update replaces the rule rather than merging with
 * settings the form no longer shows (a timeout left behind on a rule that now approves).
 */
export function buildRuleInput(form: RuleForm): { ok: true; input: PolicyInput } | { ok: false; errors: FieldErrors } {
  const errors: FieldErrors = {};
  if (!form.name.trim()) errors.name = "name: a rule needs a name; decisions made by the rule carry it";
  const args = conditionsOf(form.args, "args", errors);
  const session = conditionsOf(form.session, "session", errors);
  const timeout = durationToMs(form.timeout);
  if (!timeout.ok) errors.timeoutMs = `timeout: ${timeout.message}`;
  const asks = form.outcome === "require";
  if (form.outcome === "reject" && !form.message.trim()) errors.message = "message: a rule that rejects must say why; the agent receives this message";
  const approvers = Number(form.approvers);
  if (asks && !(Number.isInteger(approvers) && approvers >= 1 && approvers <= 10)) errors.approvers = "approvers: a whole number from 1 to 10";
  const priority = form.priority.trim();
  if (priority && !/^\d+$/.test(priority)) errors.priority = "priority: a whole number, 0 or more (lower runs first); leave empty to place it last";
  let expiresAt: string | null = null;
  if (form.expiresAt) {
    const date = new Date(form.expiresAt);
    if (Number.isNaN(date.getTime())) errors.expiresAt = "expires: not a date and time";
    else expiresAt = date.toISOString();
  }

  const route = asks ? routeFromForm(form.route) : ({ ok: true, route: null } as const);
  if (!route.ok) errors.route = route.error;
  const riskPaths = form.riskPaths.split("\n").map((line) => line.trim()).filter(Boolean);
  for (const path of riskPaths) {
    try {
      parseJsonPath(path);
    } catch (error) {
      errors.riskPaths ??= `riskPaths: ${(error as Error).message}`;
    }
  }

  const match: PolicyInput["match"] = {
    ...(form.agent.trim() ? { agent: form.agent.trim() } : {}),
    ...(form.tool.trim() ? { tool: form.tool.trim() } : {}),
    ...(form.agentKeyId.trim() ? { agentKeyId: form.agentKeyId.trim() } : {}),
    ...(form.sessionId.trim() ? { sessionId: form.sessionId.trim() } : {}),
    ...(args.length ? { args: args as never } : {}),
    ...(session.length ? { session: session as never } : {}),
    ...(form.pinned ? { pinned: true } : {}),
    ...(HINTS.some((hint) => form.annotations[hint] !== undefined) ? { annotations: { ...form.annotations } } : {}),
  };
  // The server's own check: a hint that claims safety holds only for pinned tools.
  if (match.annotations && !match.pinned) {
    try {
      compileRule({ match } as PolicyRule);
    } catch (error) {
      errors["match.annotations"] = (error as Error).message;
    }
  }
  const input: PolicyInput = {
    name: form.name.trim(),
    description: form.description.trim() || null,
    match,
    outcome: form.outcome,
    message: form.outcome === "require" ? null : form.message.trim() || null,
    role: form.role,
    approvers: asks ? approvers : 1,
    // Always the full list: an update merges, so leaving it out would keep an old restriction.
    allow: asks ? ACTIONS.filter((action) => action === "reject" || form.allow.includes(action)) : [...ACTIONS],
    timeoutMs: asks && timeout.ok ? timeout.ms : null,
    onTimeout: form.onTimeout,
    allowApproveOnTimeout: asks ? form.allowApproveOnTimeout : false,
    route: route.ok ? route.route : null,
    ...(priority && /^\d+$/.test(priority) ? { priority: Number(priority) } : {}),
    enabled: form.enabled,
    expiresAt,
    riskLabel: form.riskLabel.trim() || null,
    riskPaths,
  };

  const parsed = zPolicyInput.safeParse(input);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = fieldKey(issue.path.map(String).join("."));
      errors[key] ??= `${issue.path.join(".")}: ${issue.message}`;
    }
  }
  return Object.keys(errors).length ? { ok: false, errors } : { ok: true, input };
}
