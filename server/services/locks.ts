// Row locks taken at the start of a use case, so that what it read cannot
// change underneath it before commit (PostgreSQL runs READ COMMITTED).
//
// THE LOCK ORDER. Every use case that writes the engine's rows locks them in
// this order, and within each kind in id order, so that two use cases can wait
// on each other but never in a circle (no deadlocks, only queues):
//
//   1. Requests: the whole call chain at once, the request and every ancestor,
//      in one statement ordered by id (lockChain, lockChains). A use case never
//      locks a request alone and its ancestors later.
//   2. Approvals of those requests, in id order (a decision's conditional
//      write, a cancellation's SELECT ... FOR NO KEY UPDATE).
//   3. Tasks, in id order (refreshTaskStatuses; a follow-on request's task;
//      the trigger that counts a task's requests, after each statement that
//      writes requests: a use case writes its requests after it has locked
//      their chains and approvals, so the trigger locks the tasks where the
//      use case's own refresh of them would).
//   4. The workspace's audit chain head (an advisory lock taken by the append).
//
// Before all of them, in the node itself: its turn at the workspace's audit
// chain (AuditTurns), taken by a decision or an ask a rule decides before its
// one statement, never inside a transaction, and left when that statement is done.
//
// Every lock is FOR NO KEY UPDATE, not FOR UPDATE: inserting a row that
// refers to a locked one (an approval to its request, a request to its
// task) takes a key-share lock on it, which FOR UPDATE conflicts with, so
// two use cases that had each written such a row and then locked the row
// would wait on each other. NO KEY UPDATE still queues every use case behind
// another's lock; no use case changes an id or deletes an engine row.
//
// Rows created by the use case itself (a new request, approval or task) are
// invisible to others until commit, so they take no place in the order.
//
// approval.request and approval.decide read before they lock: each reads
// unlocked, and its one write takes the locks in this order and checks behind
// them that what it read is unchanged: tollgate_open_approval_if_unchanged
// takes the chain, then the audit lock for a rule's decision
// (server/services/approvals/request-approval.ts);
// tollgate_finish_approval_if_unchanged takes the chain, the approval, the
// chain's tasks, then the audit lock (decide-approval.ts). Decisions written
// together (tollgate_finish_approvals_if_unchanged, DecisionBatches) take
// every chain of the batch in one statement, then every approval, then every
// task, then the audit lock: never one decision's locks after another's.
// PGlite runs one transaction at a time and never waits; the order matters on
// PostgreSQL, where test/lock-order.test.ts races the use cases in pairs.
import type { AgentPrincipal } from "../domain/principal.ts";
import { findRequest, type RequestRow } from "./authority.ts";
import type { Tx } from "./deps.ts";

/**
 * Locks the call chains of these requests (each request and its ancestors)
 * in id order, in one statement (tollgate_lock_chains, migration
 * 20261124150000_approval_functions). Unknown ids lock nothing.
 */
export async function lockChains(tx: Tx, requestIds: string[]): Promise<{ id: string; taskId: string; resumeUrl: string | null }[]> {
  if (requestIds.length === 0) return [];
  const rows = await tx.$queryRaw<{ request_id: string; task_id: string; resume_url: string | null }[]>`
    SELECT * FROM tollgate_lock_chains(${requestIds}::text[])`;
  return rows.map((row) => ({ id: row.request_id, taskId: row.task_id, resumeUrl: row.resume_url }));
}

/** Locks the pending approvals of these requests in id order (lock order step 2); returns their ids. */
export async function lockPendingApprovals(tx: Tx, requestIds: string[]): Promise<string[]> {
  if (requestIds.length === 0) return [];
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM "Approval" WHERE "requestId" = ANY(${requestIds}::text[]) AND status = 'PENDING' ORDER BY id FOR NO KEY UPDATE`;
  return rows.map((row) => row.id);
}

/** Locks these tasks in id order (lock order step 3). */
export async function lockTasks(tx: Tx, taskIds: Iterable<string>): Promise<void> {
  const ids = [...new Set(taskIds)].sort();
  if (ids.length === 0) return;
  await tx.$queryRaw`SELECT id FROM "Task" WHERE id = ANY(${ids}::text[]) ORDER BY id FOR NO KEY UPDATE`;
}

/**
 * Locks a request's call chain (lock order step 1) and reads the request as it
 * is behind the lock, with the tasks of its chain, in one statement. Null when
 * it does not exist or `agent` may not act on it (see
 * server/domain/authority.ts); a null agent is only for naming a parent request.
 */
export function lockChain(tx: Tx, workspaceId: string, requestId: string, agent: AgentPrincipal | null): Promise<(RequestRow & { chainTaskIds: string[] }) | null> {
  return findRequest(tx, workspaceId, requestId, agent, { lockChain: true });
}
