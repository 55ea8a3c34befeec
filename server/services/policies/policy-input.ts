// What an admin writes for a rule, and the row it becomes once defaults apply.
import type { Policy } from "../../db/generated/client.ts";
import type { DecisionAction } from "../../domain/lifecycle.ts";
import { comparableMatch, LAST_PRIORITY, type PolicyMatch, type PolicyOutcome } from "../../domain/policy.ts";
import type { Tx } from "../deps.ts";
import type { Route } from "../../domain/routing.ts";

export interface PolicyInput {
  name: string;
  description?: string | null;
  match: PolicyMatch;
  outcome: PolicyOutcome;
  message?: string | null;
  role?: "OPERATOR" | "ADMIN";
  approvers?: number;
  allow?: DecisionAction[];
  timeoutMs?: number | null;
  onTimeout?: "reject" | "cancel";
  allowApproveOnTimeout?: boolean;
  route?: Route | null;
  priority?: number;
  enabled?: boolean;
  expiresAt?: Date | null;
  /** Shown on the calls the rule matches: a risk label, and argument paths ($.query) to highlight. */
  riskLabel?: string | null;
  riskPaths?: string[];
}

/** The fields of a Policy row that an input sets (everything but ids, authorship and timestamps). */
export function ruleFields(input: PolicyInput) {
  return {
    name: input.name,
    description: input.description ?? null,
    match: comparableMatch(input.match) as Policy["match"],
    outcome: input.outcome,
    message: input.message ?? null,
    role: input.role ?? "OPERATOR",
    approvers: input.approvers ?? 1,
    allow: input.allow ? [...new Set(input.allow)] : [],
    timeoutMs: input.timeoutMs ?? null,
    onTimeout: input.onTimeout ?? "reject",
    allowApproveOnTimeout: input.allowApproveOnTimeout ?? false,
    route: input.route ? (input.route as Policy["route"]) : null,
    enabled: input.enabled ?? true,
    expiresAt: input.expiresAt ?? null,
    riskLabel: input.riskLabel?.trim() || null,
    riskPaths: input.riskPaths ? [...new Set(input.riskPaths)] : [],
  } satisfies Partial<Policy>;
}

/** After the last written rule: new rules go to the end unless placed. */
export async function nextPriority(tx: Tx, workspaceId: string): Promise<number> {
  const last = await tx.policy.aggregate({ where: { workspaceId, priority: { lt: LAST_PRIORITY } }, _max: { priority: true } });
  return (last._max.priority ?? 0) + 10;
}

/** The unique-name violation, said in words. */
export function nameTaken(name: string) {
  return `name: a rule named "${name}" already exists in this workspace; rule names identify who decided, so choose another`;
}
