// How approvals and their decisions look on the wire.
import type { Approval } from "../../db/generated/client.ts";
import type { ApprovalStatus, StoredDecision } from "../../domain/lifecycle.ts";
import type { DecisionPayload } from "../../events/bus.ts";
import type { ToolAnnotations } from "../../domain/risk.ts";

export interface ExecutionReport {
  args: unknown;
  result: unknown;
  at: string;
}

export interface ApprovalResult {
  approvalId: string;
  status: ApprovalStatus;
  decision?: DecisionPayload;
  gate?: ReturnType<typeof gateOf>;
  execution?: ExecutionReport;
  annotations?: ToolAnnotations;
}

export function storedDecisionOf(approval: Approval): StoredDecision | null {
  if (!approval.decisionAction || !approval.decidedAt || !approval.decidedBy) return null;
  return {
    action: approval.decisionAction,
    args: approval.decisionAction === "edit" ? approval.approvedArgs : undefined,
    message: approval.decisionMessage ?? undefined,
    decidedBy: approval.decidedBy,
    decidedAt: approval.decidedAt,
  };
}

export function decisionPayload(approval: Approval): DecisionPayload | undefined {
  const stored = storedDecisionOf(approval);
  if (!stored) return undefined;
  return {
    action: stored.action,
    ...(stored.args !== undefined && stored.args !== null ? { args: stored.args } : {}),
    ...(stored.message ? { message: stored.message } : {}),
    decidedBy: stored.decidedBy,
    decidedAt: stored.decidedAt.toISOString(),
    ...(approval.deciderKind ? { decider: approval.deciderKind } : {}),
    ...(approval.deciderKind === "policy" && approval.policyId ? { policyId: approval.policyId } : {}),
    ...(approval.receipt ? { receipt: approval.receipt } : {}),
  };
}

/** The gate a pending approval waits under: what the agent can expect. */
export function gateOf(approval: Approval) {
  return {
    policyId: approval.policyId,
    policy: approval.policyName,
    allow: approval.allowedActions,
    role: approval.requiredRole,
    approvers: approval.requiredApprovals,
    expiresAt: approval.expiresAt?.toISOString() ?? null,
    onTimeout: approval.onTimeout,
  };
}

export function approvalResult(approval: Approval): ApprovalResult {
  const decision = decisionPayload(approval);
  return {
    approvalId: approval.id,
    status: approval.status,
    ...(decision ? { decision } : {}),
    ...(approval.status === "PENDING" ? { gate: gateOf(approval) } : {}),
    // Once reported, what ran: an agent that gets the decision again (another
    // replica, a restart, a redelivered webhook) knows not to run the tool twice.
    ...(approval.executedAt
      ? { execution: { args: approval.executedArgs ?? null, result: approval.executionResult ?? null, at: approval.executedAt.toISOString() } }
      : {}),
    ...(approval.toolAnnotations ? { annotations: approval.toolAnnotations as ToolAnnotations } : {}),
  };
}

