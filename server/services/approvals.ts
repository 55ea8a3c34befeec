// Approvals: agents request and await them and report what ran; operators
// decide them (write-once, race-safe); timeouts expire them; cancellation
// ends them. Every ending un-pauses the call chain in the same transaction.
import { Prisma } from "../db/generated/client.ts";
import type { Approval } from "../db/generated/client.ts";
import { idempotencyKeyOfOtherWork } from "../domain/authority.ts";
import { DomainError, notFound } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import {
  ALL_ACTIONS,
  conflictingDecisionError,
  expiryEnding,
  isActive,
  isSameDecision,
  statusForDecision,
  validateDecision,
  type ApprovalStatus,
  type DecisionAction,
  type DecisionInput,
} from "../domain/lifecycle.ts";
import type { AgentPrincipal, OperatorPrincipal } from "../domain/principal.ts";
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
  onTimeout?: "reject" | "approve";
  idempotencyKey?: string;
}

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
      const thread = await tx.threadConfig.findUnique({ where: { taskId: request.taskId }, select: { config: true } });
      const config = (thread?.config ?? null) as ThreadConfig | null;
      if (!toolAllowedByConfig(config, input.tool)) {
        throw new DomainError(
          "FORBIDDEN",
          `tool "${input.tool}" is not enabled in the thread of task ${request.taskId} (enabled: ${(config?.enabledTools ?? []).join(", ") || "none"}); enable it with thread.configure first`,
        );
      }
      const approval = await tx.approval.create({
        data: {
          id: newId("apr"),
          workspaceId,
          sessionId: request.sessionId,
          taskId: request.taskId,
          requestId: request.id,
          tool: input.tool,
          proposedArgs: input.args as Prisma.InputJsonValue,
          reason: input.reason ?? null,
          allowedActions: input.allow ? [...new Set(input.allow)] : [...ALL_ACTIONS],
          timeoutMs: input.timeoutMs ?? null,
          onTimeout: input.onTimeout ?? "reject",
          expiresAt: input.timeoutMs ? new Date(now.getTime() + input.timeoutMs) : null,
          idempotencyKey: input.idempotencyKey ?? null,
          createdAt: now,
        },
      });
      const requestChanges = await adjustPendingAlongChain(tx, request.id, +1);
      mergeChanges(changes, { requests: requestChanges, tasks: await refreshTaskStatuses(tx, requestChanges.map((c) => c.taskId)) });
      await tx.traceEvent.create({
        data: {
          workspaceId,
          sessionId: request.sessionId,
          taskId: request.taskId,
          requestId: request.id,
          category: "EXECUTION",
          type: "approval.requested",
          name: input.tool,
          data: { approvalId: approval.id, args: input.args as Prisma.InputJsonValue },
          createdAt: now,
        },
      });
      return { created: approval, changes };
    }));
  } catch (error) {
    if (input.idempotencyKey && isUniqueViolation(error)) {
      const existing = await findByIdempotencyKey(deps, agent, input.idempotencyKey, input.requestId);
      if (existing) return approvalResult(existing);
    }
    throw error;
  }
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
  publishChanges(deps, changes);
  return approvalResult(created);
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
}

/**
 * The conditional write that ends a pending approval by decision or timeout,
 * with everything that must change with it: the chain's counts, task statuses, the webhook delivery,
 * the trace and the audit entry. Returns null when the approval was no longer
 * pending (another decision won).
 */
async function finishApproval(tx: Tx, approval: Approval, ending: Ending, actor: Actor, now: Date): Promise<{ approval: Approval; changes: Changes } | null> {
  const written = {
    status: ending.status,
    decisionAction: ending.action,
    decisionMessage: ending.message ?? null,
    approvedArgs: (ending.action === "edit" ? ending.args : ending.action === "approve" ? approval.proposedArgs : null) as Approval["approvedArgs"],
    decidedBy: ending.decidedBy,
    decidedById: ending.decidedById,
    decidedAt: now,
  };
  const won = await tx.approval.updateMany({
    where: { id: approval.id, status: "PENDING" },
    data: { ...written, approvedArgs: json(written.approvedArgs) },
  });
  if (won.count === 0) return null;
  const requestChanges = await adjustPendingAlongChain(tx, approval.requestId, -1);
  const changes: Changes = { requests: requestChanges, tasks: await refreshTaskStatuses(tx, requestChanges.map((c) => c.taskId)), approvals: [] };
  const request = await tx.request.findUniqueOrThrow({ where: { id: approval.requestId }, select: { resumeUrl: true } });
  if (request.resumeUrl) {
    await tx.decisionDelivery.create({
      data: { id: newId("dlv"), workspaceId: approval.workspaceId, approvalId: approval.id, url: request.resumeUrl, nextAttemptAt: now, createdAt: now },
    });
  }
  await traceApproval(tx, approval, "approval.decided", { approvalId: approval.id, status: ending.status, action: ending.action, decidedBy: ending.decidedBy }, now);
  await appendAudit(
    tx,
    approval.workspaceId,
    {
      actor,
      action: ending.status === "EXPIRED" ? "approval.expired" : "approval.decided",
      subjectType: "approval",
      subjectId: approval.id,
      data: { status: ending.status, action: ending.action, args: ending.action === "edit" ? ending.args : undefined, message: ending.message ?? null, tool: approval.tool },
    },
    now,
  );
  // The row as the conditional update left it (it changed nothing else).
  const updated: Approval = { ...approval, ...written };
  changes.approvals.push(updated);
  return { approval: updated, changes };
}

export interface DecideInput extends DecisionInput {
  approvalId: string;
}

export interface DecideResult {
  approvalId: string;
  status: ApprovalStatus;
  decision: DecisionPayload;
}

/**
 * An operator's decision (invariant 4): write-once through a conditional
 * update; the same decision again returns the stored one, a different one is
 * CONFLICT naming who decided what and when.
 */
export async function decideApproval(deps: ServiceDeps, operator: OperatorPrincipal, input: DecideInput): Promise<DecideResult> {
  const now = deps.now();
  const actor: Actor = { type: "operator", id: operator.operatorId, label: operator.email };
  const outcome = await transact(deps, async (tx) => {
    const approval = await tx.approval.findFirst({ where: { id: input.approvalId, workspaceId: operator.workspaceId } });
    if (!approval) throw notFound("approval", input.approvalId);
    if (approval.status === "PENDING") {
      validateDecision(approval.id, approval.allowedActions, input);
      const finished = await finishApproval(
        tx,
        approval,
        { status: statusForDecision(input.action), action: input.action, args: input.args, message: input.message, decidedBy: operator.email, decidedById: operator.operatorId },
        actor,
        now,
      );
      if (finished) return { ...finished, fresh: true };
    }
    // Already ended (or another decision won just now): read what was stored.
    const current = await tx.approval.findUniqueOrThrow({ where: { id: approval.id } });
    const stored = storedDecisionOf(current);
    if (stored && current.status !== "EXPIRED" && isSameDecision(stored, input)) return { approval: current, changes: noChanges(), fresh: false };
    throw conflictingDecisionError(current.id, current.status, stored);
  });
  publishChanges(deps, outcome.changes);
  return { approvalId: outcome.approval.id, status: outcome.approval.status, decision: decisionPayload(outcome.approval)! };
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
    orderBy: { expiresAt: "asc" },
    take: limit,
  });
  let expired = 0;
  for (const approval of due) {
    const ending = expiryEnding(approval.onTimeout);
    const finished = await transact(deps, (tx) =>
      finishApproval(
        tx,
        approval,
        { status: ending.status, action: ending.action, message: ending.message, decidedBy: ending.decidedBy, decidedById: null },
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

export function approvalItem(approval: Approval & { task: { agent: string } }) {
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
    include: { task: { select: { agent: true } } },
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
  const approval = await deps.prisma.approval.findFirst({ where: { id: approvalId, workspaceId }, include: { task: { select: { agent: true } } } });
  if (!approval) throw notFound("approval", approvalId);
  return approvalItem(approval);
}
