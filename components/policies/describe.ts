// Rules in words for the list: what a rule matches and what it does.
import { formatDuration } from "@/lib/format";
import { HINTS } from "@/server/domain/tool-hints";
import type { ConditionOp, StoredRule } from "./rule-form";

const OP_WORDS: Record<ConditionOp, string> = {
  eq: "=",
  neq: "≠",
  lt: "<",
  lte: "≤",
  gt: ">",
  gte: "≥",
  in: "is one of",
  matches: "matches",
  exists: "is present",
};

export const OP_LABELS: Record<ConditionOp, string> = {
  eq: "equals (eq)",
  neq: "does not equal (neq)",
  lt: "less than (lt)",
  lte: "at most (lte)",
  gt: "greater than (gt)",
  gte: "at least (gte)",
  in: "is one of (in)",
  matches: "matches regex (matches)",
  exists: "exists",
};

export function describeCondition(condition: { path: string; op: ConditionOp; value?: unknown }): string {
  if (condition.op === "exists") return `${condition.path} ${condition.value === false ? "is absent" : "is present"}`;
  if (condition.op === "matches") return `${condition.path} matches /${String(condition.value)}/`;
  if (condition.op === "in" && Array.isArray(condition.value)) return `${condition.path} is one of ${condition.value.map((item) => JSON.stringify(item)).join(", ")}`;
  return `${condition.path} ${OP_WORDS[condition.op]} ${JSON.stringify(condition.value)}`;
}

/** One phrase per part of the match; an empty match is every call. */
export function describeMatch(match: StoredRule["match"]): string[] {
  const parts = [
    match.agent ? `agent ${match.agent}` : null,
    match.tool ? `tool ${match.tool}` : null,
    match.agentKeyId ? `agent key ${match.agentKeyId}` : null,
    match.sessionId ? `only in session ${match.sessionId}` : null,
    ...(match.session ?? []).map((condition) => `session metadata ${describeCondition(condition)}`),
    ...(match.args ?? []).map((condition) => `argument ${describeCondition(condition)}`),
    match.pinned ? "pinned MCP tools only" : null,
    ...HINTS.filter((hint) => match.annotations?.[hint] !== undefined).map((hint) => `MCP hint ${hint}: ${String(match.annotations![hint])}`),
  ].filter((part): part is string => part !== null);
  return parts.length ? parts : ["every call"];
}

const ALL_ACTIONS = ["approve", "reject", "edit", "respond"] as const;

/** What happens to a matching call, in one sentence. */
export function describeOutcome(rule: Pick<StoredRule, "outcome" | "message" | "role" | "approvers" | "allow" | "timeoutMs" | "onTimeout" | "allowApproveOnTimeout">): string {
  if (rule.outcome === "approve") return "Approved automatically";
  if (rule.outcome === "reject") return `Rejected automatically: “${rule.message ?? ""}”`;
  const who = rule.role === "ADMIN" ? (rule.approvers > 1 ? `${rule.approvers} admins` : "an admin") : rule.approvers > 1 ? `${rule.approvers} approvers` : "an approver";
  const actions = rule.allow.length === 0 || ALL_ACTIONS.every((action) => rule.allow.includes(action)) ? "any action" : rule.allow.join(", ");
  const timeout =
    rule.timeoutMs === null
      ? "no timeout"
      : `after ${formatDuration(rule.timeoutMs)} ${rule.onTimeout === "cancel" ? "it is canceled" : "it is rejected"}${rule.allowApproveOnTimeout ? " (agents may ask to approve on timeout)" : ""}`;
  return `A person decides: ${who}; ${actions}; ${timeout}`;
}
