// Applies the cascade rule inside a transaction: pending-approval counts along a
// request's call chain, and the statuses of the tasks those requests belong to.
// Returns what changed so the caller can publish it after commit.
import type { Approval } from "../db/generated/client.ts";
import type { RunStatus } from "../domain/lifecycle.ts";
import type { Tx } from "./deps.ts";

export interface RequestChange {
  workspaceId: string;
  requestId: string;
  taskId: string;
  sessionId: string;
  status: RunStatus;
}

export interface TaskChange {
  workspaceId: string;
  taskId: string;
  sessionId: string;
  status: RunStatus;
}

/** What a transaction changed, to publish after it commits. */
export interface Changes {
  requests: RequestChange[];
  tasks: TaskChange[];
  /** Approvals that ended (decided, expired, canceled). */
  approvals: Approval[];
  /** Webhook deliveries queued with those endings (for requests with a resumeUrl). */
  deliveriesQueued: number;
}

export const noChanges = (): Changes => ({ requests: [], tasks: [], approvals: [], deliveriesQueued: 0 });

export function mergeChanges(into: Changes, more: Partial<Changes>): Changes {
  into.requests.push(...(more.requests ?? []));
  into.tasks.push(...(more.tasks ?? []));
  into.approvals.push(...(more.approvals ?? []));
  into.deliveriesQueued += more.deliveriesQueued ?? 0;
  return into;
}

/**
 * Adds each delta to the pending-approval count of its request and of every
 * request above it in the call chain, and re-derives each active request's
 * status from its count (PAUSED while the count is above zero), in one
 * statement (tollgate_adjust_pending, migration 20261124150000_approval_functions):
 * deltas that meet on a shared ancestor are summed, so each row is updated
 * once. The caller has locked the chains (lockChain or lockChains in locks.ts).
 */
export async function adjustPendingAlongChains(tx: Tx, adjustments: { requestId: string; delta: number }[]): Promise<RequestChange[]> {
  if (adjustments.length === 0) return [];
  const ids = adjustments.map((adjustment) => adjustment.requestId);
  const deltas = adjustments.map((adjustment) => adjustment.delta);
  const rows = await tx.$queryRaw<{ request_id: string; task_id: string; session_id: string; workspace_id: string; status: RunStatus }[]>`
    SELECT * FROM tollgate_adjust_pending(${ids}::text[], ${deltas}::int[], ${new Date()}::timestamp(3))`;
  return rows.map((row) => ({ workspaceId: row.workspace_id, requestId: row.request_id, taskId: row.task_id, sessionId: row.session_id, status: row.status }));
}

/**
 * Re-derives the status of these tasks, in one statement:
 * tollgate_refresh_task_statuses (migrations 20261126130000_task_request_counters
 * and 20261127100000_engine_counts_its_own_requests) locks the tasks (lock
 * order step 3), then reads the counts of their running and paused requests,
 * so that concurrent transactions on the same task see each other's committed
 * changes. Returns the tasks whose status changed.
 */
export async function refreshTaskStatuses(tx: Tx, taskIds: Iterable<string>): Promise<TaskChange[]> {
  const ids = [...new Set(taskIds)].sort();
  if (ids.length === 0) return [];
  const changed = await tx.$queryRaw<{ task_id: string; session_id: string; workspace_id: string; status: RunStatus }[]>`
    SELECT * FROM tollgate_refresh_task_statuses(${ids}::text[], ${new Date()}::timestamp(3))`;
  return changed
    .map((row) => ({ workspaceId: row.workspace_id, taskId: row.task_id, sessionId: row.session_id, status: row.status }))
    .sort((a, b) => a.taskId.localeCompare(b.taskId));
}

/** A status change as the approval functions return it (tollgate_open_approval, tollgate_finish_approval). */
export interface ChangeRow {
  kind: string;
  id: string;
  task_id: string;
  session_id: string;
  workspace_id: string;
  status: RunStatus;
}

/** The requests and tasks whose status changed, from the rows of kind 'request' and 'task'. */
export function changesOf(rows: ChangeRow[]): Changes {
  return {
    requests: rows.filter((row) => row.kind === "request").map((row) => ({ workspaceId: row.workspace_id, requestId: row.id, taskId: row.task_id, sessionId: row.session_id, status: row.status })),
    tasks: rows.filter((row) => row.kind === "task").map((row) => ({ workspaceId: row.workspace_id, taskId: row.id, sessionId: row.session_id, status: row.status })),
    approvals: [],
    deliveriesQueued: 0,
  };
}
