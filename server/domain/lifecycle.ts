// The Request, Task and Approval state machines and the cascade rule
// (ARCHITECTURE.md invariants 1 to 3 and 8). Pure: services apply the results.
import { dequal } from "dequal";
import { DomainError } from "./errors.ts";

export type RunStatus = "RUNNING" | "PAUSED" | "COMPLETED" | "FAILED" | "CANCELED";
export type ApprovalStatus = "PENDING" | "APPROVED" | "REJECTED" | "EXPIRED" | "CANCELED";
export type DecisionAction = "approve" | "reject" | "edit" | "respond";
export const ALL_ACTIONS: readonly DecisionAction[] = ["approve", "reject", "edit", "respond"];

export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ["RUNNING", "PAUSED"];
export const isActive = (status: RunStatus) => status === "RUNNING" || status === "PAUSED";
export const isTerminalApproval = (status: ApprovalStatus) => status !== "PENDING";

// ---- Requests ---------------------------------------------------------------

/**
 * Invariant 1: an active request is PAUSED exactly while a pending approval
 * exists on it or below it in the call chain; `pendingBelow` counts those.
 * Terminal requests keep their status (invariant 3).
 */
export function requestStatusFor(current: RunStatus, pendingBelow: number): RunStatus {
  if (!isActive(current)) return current;
  return pendingBelow > 0 ? "PAUSED" : "RUNNING";
}

export type RequestEnding = "complete" | "fail" | "cancel";

const endingStatus: Record<RequestEnding, RunStatus> = { complete: "COMPLETED", fail: "FAILED", cancel: "CANCELED" };

export interface RequestEndingCheck {
  requestId: string;
  status: RunStatus;
  pendingApprovalIds: string[];
}

/**
 * Whether a request may end this way. Returns "unchanged" when it already
 * ended the same way (a retried call), else the new status.
 */
export function planRequestEnding(request: RequestEndingCheck, ending: RequestEnding): RunStatus | "unchanged" {
  const target = endingStatus[ending];
  if (!isActive(request.status)) {
    if (request.status === target) return "unchanged";
    throw new DomainError(
      "CONFLICT",
      `request ${request.requestId} already ended as ${request.status}; it cannot also be ${target}`,
    );
  }
  if (ending === "complete" && request.status === "PAUSED") {
    const own = request.pendingApprovalIds;
    throw new DomainError(
      "PRECONDITION_FAILED",
      own.length > 0
        ? `request ${request.requestId} is PAUSED waiting for approval ${own.join(", ")}; wait for the decision before completing it`
        : `request ${request.requestId} is PAUSED: a request it invoked is waiting for approval; complete it after that request resumes`,
      { pendingApprovalIds: own },
    );
  }
  return target;
}

// ---- Tasks ------------------------------------------------------------------

// A task's status is derived in the database, where its requests are, from
// the counts of its running and paused requests (tollgate_task_status_from_counts,
// migration 20261127100000_engine_counts_its_own_requests; the counts are kept
// by triggers on Request, and by request.begin and request.complete themselves;
// tested in test/one-round-trip.test.ts).

// ---- Approvals --------------------------------------------------------------

export interface DecisionInput {
  action: DecisionAction;
  args?: unknown;
  message?: string;
}

export interface StoredDecision {
  action: DecisionAction;
  args?: unknown;
  message?: string;
  decidedBy: string;
  decidedAt: Date;
}

/** The status an approval ends in for each operator action. */
export function statusForDecision(action: DecisionAction): "APPROVED" | "REJECTED" {
  switch (action) {
    case "approve":
    case "edit":
      return "APPROVED";
    // The tool does not run: the operator's answer stands in for its result.
    case "respond":
    case "reject":
      return "REJECTED";
  }
}

/** Checks a decision against the approval's allowed actions and the action's needs. */
export function validateDecision(approvalId: string, allowed: readonly DecisionAction[], decision: DecisionInput): void {
  if (!allowed.includes(decision.action)) {
    throw new DomainError(
      "BAD_INPUT",
      `approval ${approvalId} allows ${allowed.join(", ")}; "${decision.action}" is not one of them`,
    );
  }
  if (decision.action === "edit" && (decision.args === undefined || decision.args === null)) {
    throw new DomainError("BAD_INPUT", `an edit of approval ${approvalId} needs args: the arguments you approve`);
  }
  if (decision.action !== "edit" && decision.args !== undefined) {
    throw new DomainError("BAD_INPUT", `args are only accepted with "edit"; "${decision.action}" runs or refuses the proposed arguments`);
  }
  if (decision.action === "respond" && !decision.message?.trim()) {
    throw new DomainError("BAD_INPUT", `a respond decision on approval ${approvalId} needs a message: the answer returned to the agent`);
  }
}

/** A repeated decision equal to the stored one is answered with the stored one (invariant 4). */
export function isSameDecision(stored: StoredDecision, incoming: DecisionInput): boolean {
  return (
    stored.action === incoming.action &&
    dequal(stored.args ?? null, incoming.args ?? null) &&
    (stored.message ?? "") === (incoming.message ?? "")
  );
}

export function conflictingDecisionError(approvalId: string, status: ApprovalStatus, stored: StoredDecision | null): DomainError {
  if (!stored) {
    return new DomainError("CONFLICT", `approval ${approvalId} is already ${status}; a decision is no longer possible`, { status });
  }
  const verb = { approve: "approved", edit: "approved with edits", reject: "rejected", respond: "answered" }[stored.action];
  const when = stored.decidedAt.toISOString();
  return new DomainError(
    "CONFLICT",
    `approval ${approvalId} was already ${status === "EXPIRED" ? `expired (${verb} by timeout)` : verb} by ${stored.decidedBy} at ${when}; a different decision is not allowed`,
    { status, decidedBy: stored.decidedBy, decidedAt: when, action: stored.action },
  );
}

export type TimeoutOutcome = "reject" | "approve" | "cancel";

export const TIMEOUT_DECIDER = "tollgate (timeout)";

export interface ExpiryEnding {
  /** EXPIRED with the default decision, or CANCELED when the default is to cancel (nothing runs). */
  status: "EXPIRED" | "CANCELED";
  action: "reject" | "approve" | null;
  message: string;
  decidedBy: string;
}

/** Invariant 8: a timeout ends the approval with its configured default (fail closed unless a policy allowed approve). */
export function expiryEnding(onTimeout: TimeoutOutcome): ExpiryEnding {
  const message = `no decision within the timeout; the configured default (${onTimeout}) applies`;
  if (onTimeout === "cancel") return { status: "CANCELED", action: null, message, decidedBy: TIMEOUT_DECIDER };
  return { status: "EXPIRED", action: onTimeout, message, decidedBy: TIMEOUT_DECIDER };
}
