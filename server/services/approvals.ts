// Approvals: agents request and await them and report what ran; operators
// decide them (write-once, race-safe); timeouts expire them; cancellation
// ends them. Every ending un-pauses the call chain in the same transaction.
import { Prisma } from "../db/generated/client.ts";
import type { Approval } from "../db/generated/client.ts";
import { idempotencyKeyOfOtherWork } from "../domain/authority.ts";
import { DomainError, notFound } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import {
  conflictingDecisionError,
  expiryEnding,
  isActive,
  isSameDecision,
  statusForDecision,
  validateDecision,
  type ApprovalStatus,
  type DecisionAction,
  type DecisionInput,
  type TimeoutOutcome,
} from "../domain/lifecycle.ts";
import { LIMITS } from "../domain/json.ts";
import { evaluatePolicies, exactGlob, gateFor, hasRole, LAST_PRIORITY, type Condition, type PolicyRule } from "../domain/policy.ts";
import type { AgentPrincipal, OperatorPrincipal } from "../domain/principal.ts";
import { insertPolicy } from "./policies/create-policy.ts";
import { policySetFor } from "./policies/policy-cache.ts";
import { approvalResult, decisionPayload, storedDecisionOf, type ApprovalResult } from "./approval-views.ts";
import { toolAllowedByConfig, type ThreadConfig } from "../domain/thread/config.ts";
import type { DecisionPayload } from "../events/bus.ts";
import { log } from "../log.ts";
import { appendAudit, appendAuditEntries, SYSTEM_ACTOR, type Actor } from "./audit.ts";
import { findApproval, mayActOnRequest } from "./authority.ts";
import { adjustPendingAlongChain, adjustPendingAlongChains, mergeChanges, noChanges, refreshTaskStatuses, type Changes } from "./cascade.ts";
import type { ServiceDeps, Tx } from "./deps.ts";
import { lockRequest } from "./locks.ts";
import { isUniqueViolation, publishChanges, transact } from "./transaction.ts";

const json = (value: unknown) => (value === undefined || value === null ? Prisma.DbNull : (value as Prisma.InputJsonValue));

// ---- Requesting -------------------------------------------------------------

export interface RequestApprovalInput {
  requestId: string;
  tool: string;
  args: unknown;
  reason?: string;
  allow?: DecisionAction[];
  timeoutMs?: number;
  onTimeout?: TimeoutOutcome;
  idempotencyKey?: string;
}

interface GateFacts {
  agent: string;
  metadata: unknown;
  config: unknown;
  policyVersion: number;
  defaultTimeoutMs: number | null;
  defaultOnTimeout: TimeoutOutcome;
}

/** What the gate depends on besides the call itself, in one read: the agent, the session, the thread, the workspace's rules and default. */
async function readGateFacts(tx: Tx, taskId: string): Promise<GateFacts> {
  const [facts] = await tx.$queryRaw<GateFacts[]>`
    SELECT t.agent, s.metadata, c.config, w."policyVersion", w."defaultTimeoutMs", w."defaultOnTimeout"::text AS "defaultOnTimeout"
    FROM "Task" t
    JOIN "Session" s ON s.id = t."sessionId"
    JOIN "Workspace" w ON w.id = t."workspaceId"
    LEFT JOIN "ThreadConfig" c ON c."taskId" = t.id
    WHERE t.id = ${taskId}`;
  return facts!;
}

/**
 * An agent asks to run a tool. The workspace's policy decides what happens:
 * a rule may approve or reject at once (recorded like a person's decision,
 * with the rule as decider), or a person decides under the rule's gate (or
 * the workspace default), which the agent's own ask may only narrow.
 */
export async function requestApproval(deps: ServiceDeps, agent: AgentPrincipal, input: RequestApprovalInput): Promise<ApprovalResult> {
  const { workspaceId } = agent;
  if (input.idempotencyKey) {
    const existing = await findByIdempotencyKey(deps, agent, input.idempotencyKey, input.requestId);
    if (existing) return approvalResult(existing);
  }
  const now = deps.now();
  let created: Approval;
  let changes: Changes;
  try {
    ({ created, changes } = await transact(deps, async (tx) => {
      const changes = noChanges();
      // Locked: a concurrent request.fail or task.cancel either ends the request
      // first (and this is refused) or waits and then cancels this approval too.
      const request = await lockRequest(tx, workspaceId, input.requestId, agent);
      if (!request) throw notFound("request", input.requestId);
      if (!isActive(request.status)) {
        throw new DomainError(
          "PRECONDITION_FAILED",
          `request ${request.id} already ended as ${request.status}; approvals are requested by running requests`,
        );
      }
      const facts = await readGateFacts(tx, request.taskId);
      const config = (facts.config ?? null) as ThreadConfig | null;
      // The thread's tool list only narrows: a tool it leaves out is refused whatever the policy says.
      if (!toolAllowedByConfig(config, input.tool)) {
        throw new DomainError(
          "FORBIDDEN",
          `tool "${input.tool}" is not enabled in the thread of task ${request.taskId} (enabled: ${(config?.enabledTools ?? []).join(", ") || "none"}); enable it with thread.configure first`,
        );
      }
      const rules = await policySetFor(deps.policyCache, tx, workspaceId, facts.policyVersion);
      const { rule } = evaluatePolicies(
        rules,
        { agent: facts.agent, tool: input.tool, agentKeyId: agent.agentKeyId, sessionId: request.sessionId, sessionMetadata: facts.metadata, args: input.args },
        now,
      );
      const defaults = { timeoutMs: facts.defaultTimeoutMs, onTimeout: facts.defaultOnTimeout === "cancel" ? ("cancel" as const) : ("reject" as const) };
      const gate = gateFor(rule, defaults, input, input.tool);
      const row = {
        id: newId("apr"),
        workspaceId,
        sessionId: request.sessionId,
        taskId: request.taskId,
        requestId: request.id,
        tool: input.tool,
        proposedArgs: input.args as Prisma.InputJsonValue,
        reason: input.reason ?? null,
        idempotencyKey: input.idempotencyKey ?? null,
        policyId: rule?.id ?? null,
        policyName: rule?.name ?? null,
        policyVersion: rule?.version ?? null,
        createdAt: now,
      };
      if (gate.kind !== "require") {
        const decided = await recordPolicyDecision(deps, tx, { ...row, agent: facts.agent }, gate.rule, gate.kind, gate.message, now);
        changes.approvals.push(decided);
        return { created: decided, changes };
      }
      const approval = await tx.approval.create({
        data: {
          ...row,
          allowedActions: gate.allow,
          timeoutMs: gate.timeoutMs,
          onTimeout: gate.onTimeout,
          expiresAt: gate.timeoutMs ? new Date(now.getTime() + gate.timeoutMs) : null,
          requiredRole: gate.role,
          requiredApprovals: gate.approvers,
        },
      });
      const requestChanges = await adjustPendingAlongChain(tx, request.id, +1);
      mergeChanges(changes, { requests: requestChanges, tasks: await refreshTaskStatuses(tx, requestChanges.map((c) => c.taskId)) });
      await traceApproval(tx, approval, "approval.requested", { approvalId: approval.id, args: input.args, policy: rule?.name ?? null }, now);
      return { created: approval, changes };
    }));
  } catch (error) {
    if (input.idempotencyKey && isUniqueViolation(error)) {
      const existing = await findByIdempotencyKey(deps, agent, input.idempotencyKey, input.requestId);
      if (existing) return approvalResult(existing);
    }
    throw error;
  }
  if (created.status === "PENDING") {
    deps.bus.publish("approval:requested", {
      workspaceId,
      approvalId: created.id,
      requestId: created.requestId,
      taskId: created.taskId,
      sessionId: created.sessionId,
      tool: created.tool,
      args: created.proposedArgs,
      status: created.status,
      expiresAt: created.expiresAt?.toISOString() ?? null,
    });
  }
  publishChanges(deps, changes);
  return approvalResult(created);
}

/**
 * A rule decided: the approval is written already decided, with the rule (as
 * it is now) for decider, and traced and audited exactly like a person's
 * decision. The chain never pauses.
 */
async function recordPolicyDecision(
  deps: ServiceDeps,
  tx: Tx,
  row: Prisma.ApprovalUncheckedCreateInput & { id: string; agent: string; createdAt: Date },
  rule: PolicyRule,
  outcome: "approve" | "reject",
  message: string | null,
  now: Date,
): Promise<Approval> {
  const { agent, ...fields } = row;
  const decidedBy = `policy:${rule.name}`;
  const approved = outcome === "approve";
  const approval = await tx.approval.create({
    data: {
      ...fields,
      allowedActions: [],
      status: approved ? "APPROVED" : "REJECTED",
      decisionAction: outcome,
      decisionMessage: message,
      approvedArgs: approved ? (fields.proposedArgs as Prisma.InputJsonValue) : Prisma.DbNull,
      decidedBy,
      decidedById: rule.id,
      deciderKind: "policy",
      decidedAt: now,
      receipt: approved ? await signReceipt(deps, { ...fields, agent, approvedArgs: fields.proposedArgs, decidedBy, decidedAt: now }) : null,
    },
  });
  await traceApproval(tx, approval, "approval.requested", { approvalId: approval.id, args: fields.proposedArgs, policy: rule.name }, now);
  await traceApproval(tx, approval, "approval.decided", { approvalId: approval.id, status: approval.status, action: outcome, decidedBy }, now);
  await appendAudit(
    tx,
    approval.workspaceId,
    {
      actor: { type: "policy", id: rule.id, label: decidedBy },
      action: "approval.decided",
      subjectType: "approval",
      subjectId: approval.id,
      data: { status: approval.status, action: outcome, message, tool: approval.tool, policy: { id: rule.id, name: rule.name, version: rule.version } },
    },
    now,
  );
  return approval;
}

async function findByIdempotencyKey(deps: ServiceDeps, agent: AgentPrincipal, key: string, requestId: string) {
  const existing = await deps.prisma.approval.findUnique({ where: { workspaceId_idempotencyKey: { workspaceId: agent.workspaceId, idempotencyKey: key } } });
  if (existing && !(await mayActOnRequest(deps.prisma, agent, existing.requestId))) throw idempotencyKeyOfOtherWork(key);
  if (existing && existing.requestId !== requestId) {
    throw new DomainError(
      "CONFLICT",
      `idempotencyKey "${key}" was already used for approval ${existing.id} of request ${existing.requestId}; use a new key for a different approval`,
    );
  }
  return existing;
}

// ---- Ending -----------------------------------------------------------------

interface DecisionToSign {
  id: string;
  requestId: string;
  workspaceId: string;
  agent: string;
  tool: string;
  approvedArgs: unknown;
  decidedBy: string;
  decidedAt: Date;
}

/** The signed receipt a tool server verifies before it runs the approved call. */
function signReceipt(deps: ServiceDeps, decision: DecisionToSign): Promise<string> {
  const { id, ...subject } = decision;
  return deps.receipts.sign({ approvalId: id, ...subject });
}

/** An approval's step in its task's execution trace. */
function traceApproval(tx: Tx, approval: Approval, type: string, data: unknown, now: Date) {
  return tx.traceEvent.create({
    data: {
      workspaceId: approval.workspaceId,
      sessionId: approval.sessionId,
      taskId: approval.taskId,
      requestId: approval.requestId,
      category: "EXECUTION",
      type,
      name: approval.tool,
      data: json(data),
      createdAt: now,
    },
  });
}

interface Ending {
  status: "APPROVED" | "REJECTED" | "EXPIRED" | "CANCELED";
  action: DecisionAction | null;
  args?: unknown;
  message?: string;
  decidedBy: string;
  decidedById: string | null;
  deciderKind: "operator" | "timeout";
}

type ApprovalWithAgent = Approval & { task: { agent: string } };

/**
 * The conditional write that ends a pending approval by decision or timeout,
 * with everything that must change with it: the receipt, the chain's counts,
 * task statuses, the webhook delivery, the trace and the audit entry. Returns
 * null when the approval was no longer pending (another decision won).
 */
async function finishApproval(
  deps: ServiceDeps,
  tx: Tx,
  approval: ApprovalWithAgent,
  ending: Ending,
  actor: Actor,
  now: Date,
): Promise<{ approval: Approval; changes: Changes } | null> {
  const { task, ...row } = approval;
  const approvedArgs = (ending.action === "edit" ? ending.args : ending.action === "approve" ? row.proposedArgs : null) as Approval["approvedArgs"];
  const written = {
    status: ending.status,
    decisionAction: ending.action,
    decisionMessage: ending.message ?? null,
    approvedArgs,
    decidedBy: ending.decidedBy,
    decidedById: ending.decidedById,
    deciderKind: ending.deciderKind,
    decidedAt: now,
    receipt:
      approvedArgs === null
        ? null
        : await signReceipt(deps, { ...row, agent: task.agent, approvedArgs, decidedBy: ending.decidedBy, decidedAt: now }),
  };
  const won = await tx.approval.updateMany({
    where: { id: row.id, status: "PENDING" },
    data: { ...written, approvedArgs: json(written.approvedArgs) },
  });
  if (won.count === 0) return null;
  const requestChanges = await adjustPendingAlongChain(tx, row.requestId, -1);
  const changes: Changes = { requests: requestChanges, tasks: await refreshTaskStatuses(tx, requestChanges.map((c) => c.taskId)), approvals: [] };
  const request = await tx.request.findUniqueOrThrow({ where: { id: row.requestId }, select: { resumeUrl: true } });
  if (request.resumeUrl) {
    await tx.decisionDelivery.create({
      data: { id: newId("dlv"), workspaceId: row.workspaceId, approvalId: row.id, url: request.resumeUrl, nextAttemptAt: now, createdAt: now },
    });
  }
  await traceApproval(tx, row, "approval.decided", { approvalId: row.id, status: ending.status, action: ending.action, decidedBy: ending.decidedBy }, now);
  await appendAudit(
    tx,
    row.workspaceId,
    {
      actor,
      action: ending.deciderKind === "timeout" ? "approval.expired" : "approval.decided",
      subjectType: "approval",
      subjectId: row.id,
      data: {
        status: ending.status,
        action: ending.action,
        args: ending.action === "edit" ? ending.args : undefined,
        message: ending.message ?? null,
        tool: row.tool,
        ...(row.policyId ? { policy: { id: row.policyId, name: row.policyName, version: row.policyVersion } } : {}),
      },
    },
    now,
  );
  // The row as the conditional update left it (it changed nothing else).
  const updated: Approval = { ...row, ...written };
  changes.approvals.push(updated);
  return { approval: updated, changes };
}

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
 */
export async function decideApproval(deps: ServiceDeps, operator: OperatorPrincipal, input: DecideInput): Promise<DecideResult> {
  const now = deps.now();
  const actor: Actor = { type: "operator", id: operator.operatorId, label: operator.email };
  const outcome = await transact(deps, async (tx): Promise<DecisionOutcome> => {
    const approval = await tx.approval.findFirst({ where: { id: input.approvalId, workspaceId: operator.workspaceId }, include: { task: { select: { agent: true } } } });
    if (!approval) throw notFound("approval", input.approvalId);
    if (approval.status === "PENDING") {
      if (!hasRole(operator.role, approval.requiredRole)) {
        throw new DomainError("FORBIDDEN", `approval ${approval.id} must be decided by an ${approval.requiredRole}; ${operator.email} is ${operator.role}`);
      }
      validateDecision(approval.id, approval.allowedActions, input);
      if (input.remember) assertMayRemember(operator, approval, input);
      const decided =
        approval.requiredApprovals > 1
          ? await castVote(deps, tx, approval, operator, input, actor, now)
          : await finishApproval(
              deps,
              tx,
              approval,
              { status: statusForDecision(input.action), action: input.action, args: input.args, message: input.message, decidedBy: operator.email, decidedById: operator.operatorId, deciderKind: "operator" },
              actor,
              now,
            );
      if (decided) {
        if (!input.remember || decided.approval.status !== "APPROVED") return decided;
        return { ...decided, remembered: await rememberDecision(tx, operator, approval, input.remember, now) };
      }
    }
    // Already ended (or another decision won just now): read what was stored.
    const current = await tx.approval.findUniqueOrThrow({ where: { id: approval.id } });
    const stored = storedDecisionOf(current);
    if (stored && current.status !== "EXPIRED" && isSameDecision(stored, input)) {
      return { approval: current, changes: noChanges(), votes: current.requiredApprovals > 1 ? await votesOf(tx, current.id) : undefined };
    }
    throw conflictingDecisionError(current.id, current.status, stored);
  });
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

async function votesOf(tx: Tx, approvalId: string): Promise<Vote[]> {
  const rows = await tx.approvalVote.findMany({ where: { approvalId, action: "approve" }, orderBy: [{ createdAt: "asc" }, { operatorId: "asc" }] });
  return rows.map((vote) => ({ decidedBy: vote.decidedBy, decidedAt: vote.createdAt.toISOString(), action: vote.action }));
}

/**
 * One operator's vote on an approval that needs several. Votes are serialised
 * by a lock on the approval, so each sees the ones before it: the vote that
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
  const [locked] = await tx.$queryRaw<{ status: ApprovalStatus }[]>`SELECT status FROM "Approval" WHERE id = ${approval.id} FOR UPDATE`;
  if (locked?.status !== "PENDING") return null;
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
    await appendAudit(tx, approval.workspaceId, { actor, action: "approval.voted", subjectType: "approval", subjectId: approval.id, data: { action: "approve", tool: approval.tool } }, now);
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

export interface RememberInput {
  /** This session only, the next hour, or until revoked. */
  scope: "session" | "hour" | "always";
  /** Narrows the remembered rule to calls whose arguments also satisfy these. */
  args?: Condition[];
}

/**
 * Who may turn a decision into a rule: approvers for this session or the next
 * hour, admins for always; never for an approval that needs several
 * approvers, which one person's rule would bypass.
 */
function assertMayRemember(operator: OperatorPrincipal, approval: Approval, input: DecideInput): void {
  if (input.action !== "approve") throw new DomainError("BAD_INPUT", `remember goes with "approve" only; "${input.action}" cannot be remembered`);
  if (approval.requiredApprovals > 1) {
    throw new DomainError("FORBIDDEN", `approval ${approval.id} needs ${approval.requiredApprovals} approvers; one person cannot remember it as a rule`);
  }
  if (input.remember!.scope === "always" && operator.role !== "ADMIN") {
    throw new DomainError("FORBIDDEN", `only admins may remember a decision for always; ${operator.email} is ${operator.role} (remember it for this session or the next hour instead)`);
  }
}

const REMEMBER_HOUR_MS = 3600_000;

/**
 * Writes the remembered decision as a policy rule that approves this tool for
 * this agent. It sits just above the rule that asked for a person (so rules
 * an admin placed before that one still win), or after every written rule
 * when the workspace default applied.
 */
async function rememberDecision(tx: Tx, operator: OperatorPrincipal, approval: ApprovalWithAgent, remember: RememberInput, now: Date) {
  const source = approval.policyId ? await tx.policy.findUnique({ where: { id: approval.policyId }, select: { priority: true } }) : null;
  const scope = { session: "in this session", hour: "for an hour", always: "always" }[remember.scope];
  const label = `Allow ${approval.tool} for ${approval.task.agent} ${scope}`;
  const policy = await insertPolicy(
    tx,
    operator,
    {
      name: `${label.slice(0, LIMITS.nameChars - approval.id.length - 8)} (from ${approval.id})`,
      match: {
        agent: exactGlob(approval.task.agent),
        tool: exactGlob(approval.tool),
        ...(remember.scope === "session" ? { sessionId: approval.sessionId } : {}),
        ...(remember.args?.length ? { args: remember.args } : {}),
      },
      outcome: "approve",
      expiresAt: remember.scope === "hour" ? new Date(now.getTime() + REMEMBER_HOUR_MS) : null,
    },
    now,
    { sourceApprovalId: approval.id, priority: source?.priority ?? LAST_PRIORITY },
  );
  return { policyId: policy.id, name: policy.name };
}

export type DecideManyItem =
  | ({ ok: true } & DecideResult)
  | { ok: false; approvalId: string; code: string; message: string; details: Record<string, unknown> | null };

/**
 * One decision for many approvals (the console's bulk actions). Each is its
 * own write-once decision in its own transaction, so one that another operator
 * decided first does not hold back the rest; the answer says what happened to each.
 */
export async function decideMany(
  deps: ServiceDeps,
  operator: OperatorPrincipal,
  input: { approvalIds: string[]; action: "approve" | "reject" | "respond"; message?: string },
): Promise<DecideManyItem[]> {
  const results: DecideManyItem[] = [];
  for (const approvalId of new Set(input.approvalIds)) {
    try {
      results.push({ ok: true, ...(await decideApproval(deps, operator, { approvalId, action: input.action, message: input.message })) });
    } catch (error) {
      if (error instanceof DomainError) {
        results.push({ ok: false, approvalId, code: error.code, message: error.message, details: error.details ?? null });
      } else {
        // The others are still decided; this one is reported, not thrown, so the answer stays complete.
        log.error(`decideMany: deciding ${approvalId} failed`, error);
        results.push({ ok: false, approvalId, code: "INTERNAL", message: "an internal error stopped this decision; it has been logged, try again", details: null });
      }
    }
  }
  return results;
}

/** Expires the pending approvals whose time is up (invariant 8). Returns how many. */
export async function expireDueApprovals(deps: ServiceDeps, limit = 100): Promise<number> {
  const now = deps.now();
  const due = await deps.prisma.approval.findMany({
    where: { status: "PENDING", expiresAt: { lte: now } },
    include: { task: { select: { agent: true } } },
    orderBy: { expiresAt: "asc" },
    take: limit,
  });
  let expired = 0;
  for (const approval of due) {
    const ending = expiryEnding(approval.onTimeout);
    const finished = await transact(deps, (tx) =>
      finishApproval(
        deps,
        tx,
        approval,
        { status: ending.status, action: ending.action, message: ending.message, decidedBy: ending.decidedBy, decidedById: null, deciderKind: "timeout" },
        SYSTEM_ACTOR,
        now,
      ),
    );
    if (finished) {
      expired += 1;
      publishChanges(deps, finished.changes);
    }
  }
  return expired;
}

/** The earliest expiry among pending approvals, for the timeout scheduler. */
export async function nextExpiry(deps: ServiceDeps): Promise<Date | null> {
  const next = await deps.prisma.approval.findFirst({
    where: { status: "PENDING", expiresAt: { not: null } },
    orderBy: { expiresAt: "asc" },
    select: { expiresAt: true },
  });
  return next?.expiresAt ?? null;
}

/**
 * Cancels the pending approvals on these requests, inside the caller's
 * transaction, in a fixed number of statements however many there are (a
 * canceled task tree can hold thousands); the caller publishes the returned
 * changes after commit. No webhook is sent: the request itself ended.
 */
export async function cancelPendingApprovalsOf(tx: Tx, requestIds: string[], actor: Actor, now: Date, reason: string): Promise<Changes> {
  const changes = noChanges();
  if (requestIds.length === 0) return changes;
  // Locked first, so a decision racing with the cancellation waits and then finds them ended.
  const locked = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM "Approval" WHERE "requestId" = ANY(${requestIds}::text[]) AND status = 'PENDING' ORDER BY id FOR UPDATE`;
  if (locked.length === 0) return changes;
  const ids = locked.map((row) => row.id);
  const pending = await tx.approval.findMany({ where: { id: { in: ids } } });
  const written = {
    status: "CANCELED" as const,
    decisionAction: null,
    decisionMessage: reason,
    decidedBy: actor.label,
    decidedById: actor.type === "operator" ? actor.id : null,
    decidedAt: now,
  };
  await tx.approval.updateMany({ where: { id: { in: ids } }, data: written });
  const perRequest = new Map<string, number>();
  for (const approval of pending) perRequest.set(approval.requestId, (perRequest.get(approval.requestId) ?? 0) - 1);
  const requestChanges = await adjustPendingAlongChains(tx, [...perRequest].map(([requestId, delta]) => ({ requestId, delta })));
  mergeChanges(changes, { requests: requestChanges, tasks: await refreshTaskStatuses(tx, requestChanges.map((change) => change.taskId)) });
  await tx.traceEvent.createMany({
    data: pending.map((approval) => ({
      workspaceId: approval.workspaceId,
      sessionId: approval.sessionId,
      taskId: approval.taskId,
      requestId: approval.requestId,
      category: "EXECUTION" as const,
      type: "approval.decided",
      name: approval.tool,
      data: { approvalId: approval.id, status: "CANCELED", action: null, decidedBy: actor.label },
      createdAt: now,
    })),
  });
  await appendAuditEntries(
    tx,
    pending[0]!.workspaceId,
    pending.map((approval) => ({
      actor,
      action: "approval.canceled",
      subjectType: "approval",
      subjectId: approval.id,
      data: { status: "CANCELED", action: null, message: reason, tool: approval.tool },
    })),
    now,
  );
  changes.approvals.push(...pending.map((approval) => ({ ...approval, ...written })));
  return changes;
}

// ---- Waiting and reporting --------------------------------------------------

/**
 * Long-poll: answers at once when the approval is decided, else the moment its
 * decision commits on this node (or arrives from another), else after
 * `timeoutMs` with the still-pending status.
 */
export async function awaitApproval(
  deps: ServiceDeps,
  agent: AgentPrincipal,
  approvalId: string,
  timeoutMs: number,
): Promise<ApprovalResult> {
  const woken = deps.waiters.wait(approvalId, timeoutMs, deps.shutdown);
  try {
    const approval = await findApproval(deps.prisma, agent, approvalId);
    if (!approval) throw notFound("approval", approvalId);
    if (approval.status !== "PENDING") return approvalResult(approval);
    await woken.promise;
    const current = await deps.prisma.approval.findUniqueOrThrow({ where: { id: approvalId } });
    return approvalResult(current);
  } finally {
    woken.cancel();
  }
}

/** Records what the agent actually ran (invariant 9's third record); write-once. */
export async function reportExecution(
  deps: ServiceDeps,
  agent: AgentPrincipal,
  input: { approvalId: string; executedArgs: unknown; result?: unknown },
) {
  const now = deps.now();
  return transact(deps, async (tx) => {
    const approval = await findApproval(tx, agent, input.approvalId);
    if (!approval) throw notFound("approval", input.approvalId);
    const ran = approval.status === "APPROVED" || (approval.status === "EXPIRED" && approval.decisionAction === "approve");
    if (!ran) {
      throw new DomainError(
        "PRECONDITION_FAILED",
        `approval ${approval.id} is ${approval.status}${approval.decisionAction ? ` (${approval.decisionAction})` : ""}; the tool may not run, so there is no execution to report`,
      );
    }
    if (approval.executedAt) {
      if (JSON.stringify(approval.executedArgs) === JSON.stringify(input.executedArgs)) return { approvalId: approval.id };
      throw new DomainError("CONFLICT", `approval ${approval.id} already has its execution reported at ${approval.executedAt.toISOString()}`);
    }
    // Write-once: of two concurrent reports, the second finds executedAt set.
    const reported = await tx.approval.updateMany({
      where: { id: approval.id, executedAt: null },
      data: { executedArgs: json(input.executedArgs), executionResult: json(input.result), executedAt: now },
    });
    if (reported.count === 0) {
      const current = await tx.approval.findUniqueOrThrow({ where: { id: approval.id } });
      if (JSON.stringify(current.executedArgs) === JSON.stringify(input.executedArgs)) return { approvalId: approval.id };
      throw new DomainError("CONFLICT", `approval ${approval.id} already has its execution reported at ${current.executedAt!.toISOString()}`);
    }
    await traceApproval(tx, approval, "tool.executed", { approvalId: approval.id, args: input.executedArgs, result: input.result ?? null }, now);
    return { approvalId: approval.id };
  });
}

// ---- Console queries --------------------------------------------------------

export interface ApprovalListFilter {
  status?: ApprovalStatus | "DECIDED";
  sessionId?: string;
  agent?: string;
  tool?: string;
  limit: number;
  /** Id of the last item of the previous page. */
  cursor?: string;
}

const VOTES = { select: { decidedBy: true, createdAt: true, action: true }, orderBy: [{ createdAt: "asc" as const }, { operatorId: "asc" as const }] };

export function approvalItem(approval: Approval & { task: { agent: string }; votes: { decidedBy: string; createdAt: Date; action: DecisionAction }[] }) {
  return {
    approvalId: approval.id,
    requestId: approval.requestId,
    taskId: approval.taskId,
    sessionId: approval.sessionId,
    agent: approval.task.agent,
    tool: approval.tool,
    args: approval.proposedArgs,
    reason: approval.reason,
    allow: approval.allowedActions,
    status: approval.status,
    createdAt: approval.createdAt.toISOString(),
    expiresAt: approval.expiresAt?.toISOString() ?? null,
    onTimeout: approval.onTimeout,
    decision: decisionPayload(approval) ?? null,
    approvedArgs: approval.approvedArgs ?? null,
    executedArgs: approval.executedArgs ?? null,
    executionResult: approval.executionResult ?? null,
    executedAt: approval.executedAt?.toISOString() ?? null,
    policy: approval.policyId ? { policyId: approval.policyId, name: approval.policyName, version: approval.policyVersion } : null,
    decider: approval.deciderKind,
    requiredRole: approval.requiredRole,
    requiredApprovals: approval.requiredApprovals,
    votes: approval.votes.map((vote) => ({ decidedBy: vote.decidedBy, decidedAt: vote.createdAt.toISOString(), action: vote.action })),
    receipt: approval.receipt,
  };
}

export type ApprovalItem = ReturnType<typeof approvalItem>;

/** Newest first: pending ones by creation, decided ones by decision time. */
export async function listApprovals(deps: ServiceDeps, workspaceId: string, filter: ApprovalListFilter): Promise<{ items: ApprovalItem[]; nextCursor: string | null; total: number }> {
  const decided = filter.status === "DECIDED";
  const status: Prisma.ApprovalWhereInput["status"] = decided ? { not: "PENDING" } : filter.status === "DECIDED" ? undefined : filter.status;
  const where: Prisma.ApprovalWhereInput = {
    workspaceId,
    ...(status ? { status } : {}),
    ...(filter.sessionId ? { sessionId: filter.sessionId } : {}),
    ...(filter.tool ? { tool: filter.tool } : {}),
    ...(filter.agent ? { task: { agent: filter.agent } } : {}),
  };
  const rows = await deps.prisma.approval.findMany({
    where,
    include: { task: { select: { agent: true } }, votes: VOTES },
    orderBy: decided ? [{ decidedAt: "desc" }, { id: "desc" }] : [{ createdAt: "desc" }, { id: "desc" }],
    take: filter.limit + 1,
    ...(filter.cursor ? { cursor: { id: filter.cursor }, skip: 1 } : {}),
  });
  const page = rows.slice(0, filter.limit);
  const nextCursor = rows.length > filter.limit ? (page.at(-1)?.id ?? null) : null;
  // Counting is only needed when the page does not already show everything.
  const total = nextCursor || filter.cursor ? await deps.prisma.approval.count({ where }) : page.length;
  return { items: page.map(approvalItem), nextCursor, total };
}

export async function getApproval(deps: ServiceDeps, workspaceId: string, approvalId: string) {
  const approval = await deps.prisma.approval.findFirst({ where: { id: approvalId, workspaceId }, include: { task: { select: { agent: true } }, votes: VOTES } });
  if (!approval) throw notFound("approval", approvalId);
  return approvalItem(approval);
}
