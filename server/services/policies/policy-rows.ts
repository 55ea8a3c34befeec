// Policy rows as the domain and the API see them, and the one check every
// written rule passes before it is stored.
import type { Policy } from "../../db/generated/client.ts";
import { DomainError } from "../../domain/errors.ts";
import { compileRule, parseJsonPath, type PolicyMatch, type PolicyRule } from "../../domain/policy.ts";
import { routeProblem, type Route } from "../../domain/routing.ts";

export function ruleOf(row: Policy): PolicyRule {
  return {
    id: row.id,
    name: row.name,
    version: row.version,
    priority: row.priority,
    enabled: row.enabled,
    remembered: row.sourceApprovalId !== null,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    match: row.match as PolicyMatch,
    outcome: row.outcome,
    message: row.message,
    role: row.role === "ADMIN" ? "ADMIN" : "OPERATOR",
    approvers: row.approvers,
    allow: row.allow,
    timeoutMs: row.timeoutMs,
    onTimeout: row.onTimeout === "cancel" ? "cancel" : "reject",
    allowApproveOnTimeout: row.allowApproveOnTimeout,
    route: (row.route as Route | null) ?? null,
    riskLabel: row.riskLabel,
    riskPaths: row.riskPaths,
  };
}

export function policyView(row: Policy) {
  return {
    policyId: row.id,
    name: row.name,
    description: row.description,
    priority: row.priority,
    enabled: row.enabled,
    version: row.version,
    match: row.match as PolicyMatch,
    outcome: row.outcome,
    message: row.message,
    role: row.role === "ADMIN" ? ("ADMIN" as const) : ("OPERATOR" as const),
    approvers: row.approvers,
    allow: row.allow,
    timeoutMs: row.timeoutMs,
    onTimeout: row.onTimeout === "cancel" ? ("cancel" as const) : ("reject" as const),
    allowApproveOnTimeout: row.allowApproveOnTimeout,
    route: (row.route as Route | null) ?? null,
    riskLabel: row.riskLabel,
    riskPaths: row.riskPaths,
    /** The agent and tool globs as written, when they were rewritten into the form names are compared in. */
    matchRewrittenFrom: (row.matchRewrittenFrom as { agent?: string; tool?: string } | null) ?? null,
    remembered: row.sourceApprovalId !== null,
    sourceApprovalId: row.sourceApprovalId,
    expiresAt: row.expiresAt?.toISOString() ?? null,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export type PolicyView = ReturnType<typeof policyView>;

/**
 * Checks what no schema can: globs, JSON paths and regular expressions compile,
 * and the outcome's settings fit together. Throws BAD_INPUT naming the field.
 */
export function assertValidRule(rule: PolicyRule): void {
  compileRule(rule);
  for (const path of rule.riskPaths) {
    try {
      parseJsonPath(path);
    } catch (error) {
      throw error instanceof DomainError ? new DomainError("BAD_INPUT", `riskPaths: ${error.message}`, { field: "riskPaths" }) : error;
    }
  }
  if (rule.outcome !== "require") {
    const stray = rule.approvers > 1 ? "approvers" : rule.timeoutMs !== null ? "timeoutMs" : rule.allowApproveOnTimeout ? "allowApproveOnTimeout" : null;
    if (stray) {
      throw new DomainError("BAD_INPUT", `${stray}: only a rule whose outcome is "require" asks a person; "${rule.outcome}" decides at once`);
    }
  }
  if (rule.route && rule.outcome !== "require") {
    throw new DomainError("BAD_INPUT", `route: only a rule whose outcome is "require" asks a person; "${rule.outcome}" decides at once`);
  }
  const problem = rule.route ? routeProblem(rule.route) : null;
  if (problem) throw new DomainError("BAD_INPUT", problem);
  if (rule.outcome === "reject" && !rule.message?.trim()) {
    throw new DomainError("BAD_INPUT", 'message: a rule that rejects must say why; the agent receives this message');
  }
}
