// An operator decides an approval: write-once and race-safe through the shared
// conditional write; one that needs several approvers collects votes until enough agree.
import type { Approval } from "../../db/generated/client.ts";
import { checkFormAnswer, type FormSchema } from "../../domain/form.ts";
import { DomainError, notFound } from "../../domain/errors.ts";
import {
  conflictingDecisionError,
  isSameDecision,
  statusForDecision,
  validateDecision,
  type ApprovalStatus,
  type DecisionAction,
  type DecisionInput,
} from "../../domain/lifecycle.ts";
import { hasRole } from "../../domain/policy.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import type { DecisionPayload } from "../../events/bus.ts";
import { type Actor } from "../audit.ts";
import { noChanges, type Changes } from "../cascade.ts";
import type { ServiceDeps, Tx } from "../deps.ts";
import { publishChanges, transact, withRetries } from "../transaction.ts";
import { decisionPayload, storedDecisionOf } from "./approval-views.ts";
import {
  finishApproval,
  finishApprovalIfUnchanged,
  finishLockedApproval,
  lockApprovalEnding,
  readApprovalBeforeEnding,
  type ApprovalWithAgent,
  type Ending,
} from "./finish-approval.ts";
import type { NotWritten } from "./decision-batches.ts";
import { assertMayRemember, rememberDecision, type RememberInput } from "./remember-decision.ts";

export interface DecideInput extends DecisionInput {
  approvalId: string;
  /** "Approve, and approve this tool for this agent from now on": creates a policy rule. */
  remember?: RememberInput;
}

export interface Vote {
  decidedBy: string;
  decidedAt: string;
  action: DecisionAction;
}

export interface DecideResult {
  approvalId: string;
  /** PENDING while a quorum still waits for more approvers. */
  status: ApprovalStatus;
  decision?: DecisionPayload;
  /** For a quorum: who has approved so far, and how many must. */
  approvals?: Vote[];
  required?: number;
  remembered?: { policyId: string; name: string };
}

type DecisionOutcome = { approval: Approval; changes: Changes; votes?: Vote[]; remembered?: { policyId: string; name: string } };

/**
 * An operator's decision (invariant 4): write-once through a conditional
 * update; the same decision again returns the stored one, a different one is
 * CONFLICT naming who decided what and when. An approval that needs several
 * approvers collects votes until enough agree; one rejection ends it.
 *
 * The common case (one approver, a pending approval) is two statements and no
 * transaction: the approval and the audit head read unlocked, and a write that
 * checks behind the locks that both are as read (decideIfUnchanged). Anything
 * else, or a change meanwhile, is decided in one transaction behind the locks
 * (decideBehindLocks), which is also the path from the start while the
 * workspace's audit head is contended.
 */
export async function decideApproval(deps: ServiceDeps, operator: OperatorPrincipal, input: DecideInput): Promise<DecideResult> {
  const now = deps.now();
  const actor: Actor = { type: "operator", id: operator.operatorId, label: operator.email };
  // The receipt may be signed inside a transaction, where the embedded database could not also read the key.
  await deps.receipts.warm(operator.workspaceId);
  const outcome = (await decideIfUnchanged(deps, operator, input, actor, now)) ?? (await transact(deps, (tx) => decideBehindLocks(deps, tx, operator, input, actor, now)));
  publishChanges(deps, outcome.changes);
  const { approval, votes, remembered } = outcome;
  if (approval.status === "PENDING") deps.bus.publish("approval:voted", { workspaceId: approval.workspaceId, sessionId: approval.sessionId, approvalId: approval.id, votes: votes?.length ?? 0, required: approval.requiredApprovals });
  return {
    approvalId: approval.id,
    status: approval.status,
    ...(approval.status === "PENDING" ? {} : { decision: decisionPayload(approval)! }),
    ...(votes ? { approvals: votes, required: approval.requiredApprovals } : {}),
    ...(remembered ? { remembered } : {}),
  };
}

/** The ending one operator's decision writes. */
function operatorEnding(operator: OperatorPrincipal, input: DecideInput): Ending {
  return { status: statusForDecision(input.action), action: input.action, args: input.args, message: input.message, decidedBy: operator.email, decidedById: operator.operatorId, deciderKind: "operator" };
}

/** Refuses a decision this operator may not make on this pending approval, or one it does not allow. */
function checkDecision(operator: OperatorPrincipal, approval: Approval, input: DecideInput): void {
  if (!hasRole(operator.role, approval.requiredRole)) {
    throw new DomainError("FORBIDDEN", `approval ${approval.id} must be decided by an ${approval.requiredRole}; ${operator.email} is ${operator.role}`);
  }
  validateDecision(approval.id, approval.allowedActions, input);
  // A form's answer is the edit's args: only values of the fields it asked for.
  if (approval.kind === "form" && input.action === "edit") checkFormAnswer(approval.id, approval.form as FormSchema, input.args);
  if (input.remember) assertMayRemember(operator, approval, input);
}

/**
 * The decision without a transaction, in this node's turn at the workspace's
 * audit chain (AuditTurns): on an approval this node opened, the write alone
 * (decideOnOpenedApproval), written with the other decisions queued for the
 * turn; otherwise two statements (readApprovalBeforeEnding,
 * finishApprovalIfUnchanged). Null when it does not apply: a rule to remember
 * (written in the decision's transaction), a quorum, an approval no longer
 * pending (the locked path answers a repeat or a conflict), a workspace whose
 * audit head is contended, a turn that did not come in time, or a change
 * between the read and the write.
 */
async function decideIfUnchanged(deps: ServiceDeps, operator: OperatorPrincipal, input: DecideInput, actor: Actor, now: Date): Promise<DecisionOutcome | null> {
  if (input.remember || deps.auditHeadContention.contended(operator.workspaceId, now)) return null;
  const decided = await decideOnOpenedApproval(deps, operator, input, actor, now);
  // The turn did not come in time: the decision queues on the database's audit lock instead.
  if (decided === "turn missed") return null;
  if (decided !== "read it") return decided;
  const leave = await deps.auditTurns.enter(operator.workspaceId);
  if (!leave) return null;
  try {
    const read = await readApprovalBeforeEnding(deps, operator.workspaceId, input.approvalId);
    if (!read) throw notFound("approval", input.approvalId);
    if (read.approval.status !== "PENDING" || read.approval.requiredApprovals > 1) return null;
    checkDecision(operator, read.approval, input);
    // The write is a transaction of its own, retried like one on a deadlock or serialization failure.
    const finished = await withRetries(() => finishApprovalIfUnchanged(deps, read, operatorEnding(operator, input), actor, now));
    if (finished === "contended") deps.auditHeadContention.noted(operator.workspaceId, now);
    return typeof finished === "string" ? null : finished;
  } finally {
    leave();
  }
}

/**
 * The decision as one statement: the approval as this node opened it
 * (OpenedApprovals), chained to the audit entry this node last wrote in the
 * workspace (WrittenAuditHeads; the head read in the turn while that is not
 * trusted) or to the decision queued before it in the same statement
 * (DecisionBatches), and the write, which finds behind the locks that the
 * approvals are still pending and that entry still the head. "read it" when
 * the node did not open the approval, the write found an approval ended or
 * the head taken, and when the decision would be refused.
 */
async function decideOnOpenedApproval(
  deps: ServiceDeps,
  operator: OperatorPrincipal,
  input: DecideInput,
  actor: Actor,
  now: Date,
): Promise<DecisionOutcome | NotWritten> {
  const { workspaceId } = operator;
  const opened = deps.openedApprovals.take(workspaceId, input.approvalId);
  if (!opened) return "read it";
  // A refusal is made on the approval as read, which also knows whether it has ended meanwhile.
  try {
    checkDecision(operator, opened.approval, input);
  } catch (error) {
    if (error instanceof DomainError) return "read it";
    throw error;
  }
  return deps.decisionBatches.write(workspaceId, { opened, ending: operatorEnding(operator, input), actor, now });
}

/** The decision in one transaction, every lock taken and the approval read behind them in its first statement. */
async function decideBehindLocks(deps: ServiceDeps, tx: Tx, operator: OperatorPrincipal, input: DecideInput, actor: Actor, now: Date): Promise<DecisionOutcome> {
  const locked = await lockApprovalEnding(tx, operator.workspaceId, input.approvalId);
  if (!locked) throw notFound("approval", input.approvalId);
  const { approval } = locked;
  if (approval.status === "PENDING") {
    checkDecision(operator, approval, input);
    const decided =
      approval.requiredApprovals > 1
        ? await castVote(deps, tx, approval, operator, input, actor, now)
        : await finishLockedApproval(deps, tx, locked, operatorEnding(operator, input), actor, now);
    if (decided) {
      if (!input.remember || decided.approval.status !== "APPROVED") return decided;
      return { ...decided, remembered: await rememberDecision(deps, tx, operator, approval, input.remember, now) };
    }
  }
  // Already ended (read behind its lock, so no other decision can land now): the same decision again gets what was stored.
  const stored = storedDecisionOf(approval);
  if (stored && approval.status !== "EXPIRED" && isSameDecision(stored, input)) {
    const { task: _task, ...current } = approval;
    return { approval: current, changes: noChanges(), votes: current.requiredApprovals > 1 ? await votesOf(tx, current.id) : undefined };
  }
  throw conflictingDecisionError(approval.id, approval.status, stored);
}

async function votesOf(tx: Tx, approvalId: string): Promise<Vote[]> {
  const rows = await tx.approvalVote.findMany({ where: { approvalId, action: "approve" }, orderBy: [{ createdAt: "asc" }, { operatorId: "asc" }] });
  return rows.map((vote) => ({ decidedBy: vote.decidedBy, decidedAt: vote.createdAt.toISOString(), action: vote.action }));
}

/**
 * One operator's vote on an approval that needs several. Votes are serialised
 * by the approval's lock, which the caller holds (lockApprovalEnding), so each
 * sees the ones before it: the vote that
 * makes the quorum ends the approval APPROVED; any rejection ends it REJECTED
 * at once; an approver voting again changes nothing. Returns null when the
 * approval already ended.
 */
async function castVote(
  deps: ServiceDeps,
  tx: Tx,
  approval: ApprovalWithAgent,
  operator: OperatorPrincipal,
  input: DecideInput,
  actor: Actor,
  now: Date,
): Promise<DecisionOutcome | null> {
  const key = { approvalId_operatorId: { approvalId: approval.id, operatorId: operator.operatorId } };
  const vote = { action: input.action, message: input.message ?? null, decidedBy: operator.email, createdAt: now };
  if (input.action !== "approve") {
    await tx.approvalVote.upsert({ where: key, create: { approvalId: approval.id, operatorId: operator.operatorId, workspaceId: approval.workspaceId, ...vote }, update: vote });
    const ending: Ending = { status: "REJECTED", action: input.action, message: input.message, decidedBy: operator.email, decidedById: operator.operatorId, deciderKind: "operator" };
    const finished = await finishApproval(deps, tx, approval, ending, actor, now);
    return finished && { ...finished, votes: await votesOf(tx, approval.id) };
  }
  const already = await tx.approvalVote.findUnique({ where: key });
  if (!already) {
    await tx.approvalVote.create({ data: { approvalId: approval.id, operatorId: operator.operatorId, workspaceId: approval.workspaceId, ...vote } });
    await deps.audit.append(tx, approval.workspaceId, { actor, action: "approval.voted", subjectType: "approval", subjectId: approval.id, data: { action: "approve", tool: approval.tool } }, now);
  }
  const votes = await votesOf(tx, approval.id);
  if (votes.length < approval.requiredApprovals) {
    const { task: _task, ...row } = approval;
    return { approval: row, changes: noChanges(), votes };
  }
  const ending: Ending = {
    status: "APPROVED",
    action: "approve",
    decidedBy: votes.map((each) => each.decidedBy).join(", "),
    decidedById: operator.operatorId,
    deciderKind: "operator",
  };
  const finished = await finishApproval(deps, tx, approval, ending, actor, now);
  return finished && { ...finished, votes };
}
