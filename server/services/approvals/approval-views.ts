// How approvals and their decisions look on the wire.
import type { Approval } from "../../db/generated/client.ts";
import type { ApprovalStatus, StoredDecision } from "../../domain/lifecycle.ts";
import type { DecisionPayload, TollgateEvents } from "../../events/bus.ts";
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


/**
 * A decided approval as its waiters are answered, built from the decision's
 * event (and the row read before the wait, when there is one, for what the
 * agent sent with its ask): the event carries the whole decision
 * (decisionPayload of the committed row), so no second read is needed. Null
 * when the event came without its decision (too large for the link between
 * nodes): read the row then.
 */
export function approvalResultFromEvent(event: TollgateEvents["approval:decided"], askedRow?: Approval): ApprovalResult | null {
  if (event.decisionOmitted || event.status === "PENDING") return null;
  return {
    approvalId: event.approvalId,
    status: event.status,
    ...(event.decision ? { decision: event.decision } : {}),
    ...(askedRow?.toolAnnotations ? { annotations: askedRow.toolAnnotations as ToolAnnotations } : {}),
  };
}
