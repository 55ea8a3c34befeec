-- Tasks' counts moved by request writes of the caller's (one entry a write:
-- its task, and what it added to the task's running and paused requests), and
-- their statuses with them, in one update of each task's row. The tasks are
-- locked first, in id order (lock order step 3). Returns the tasks whose
-- status changed, in id order. The caller writes its requests with the
-- trigger standing aside (tollgate.request_counts = 'kept_by_caller').
-- tollgate_count_request_in_task (20261127100000) is the same update for the
-- one task of request.begin and request.complete, without the arrays and the
-- lock its callers already hold: calling this one instead cost each of them
-- 0.08 ms more inside PostgreSQL.
--
-- Locks, in the order of server/services/locks.ts: tasks (3) FOR NO KEY UPDATE.
CREATE OR REPLACE FUNCTION public.tollgate_count_requests_in_tasks(p_task_ids text[], p_running integer[], p_paused integer[], p_now timestamp without time zone)
 RETURNS TABLE(task_id text, session_id text, workspace_id text, status "RunStatus")
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
BEGIN
  PERFORM 1 FROM "Task" t WHERE t.id = ANY(p_task_ids) ORDER BY t.id FOR NO KEY UPDATE;
  RETURN QUERY
  WITH per_task AS (
    SELECT d.id, SUM(d.running)::int AS running, SUM(d.paused)::int AS paused
    FROM unnest(p_task_ids, p_running, p_paused) AS d(id, running, paused) GROUP BY d.id
  ), derived AS MATERIALIZED (
    SELECT t.id, t.status AS old_status, per_task.running, per_task.paused,
      tollgate_task_status_from_counts(t.id, t.status, t."runningRequests" + per_task.running, t."pausedRequests" + per_task.paused) AS new_status
    FROM per_task JOIN "Task" t ON t.id = per_task.id
  ), updated AS (
    UPDATE "Task" t SET "runningRequests" = t."runningRequests" + derived.running, "pausedRequests" = t."pausedRequests" + derived.paused,
      status = derived.new_status, "updatedAt" = CASE WHEN derived.new_status <> derived.old_status THEN p_now ELSE t."updatedAt" END
    FROM derived
    WHERE t.id = derived.id AND (derived.running <> 0 OR derived.paused <> 0 OR derived.new_status <> derived.old_status)
    RETURNING t.id, t."sessionId", t."workspaceId", t.status, derived.new_status <> derived.old_status AS changed
  )
  SELECT u.id, u."sessionId", u."workspaceId", u.status FROM updated u WHERE u.changed ORDER BY u.id;
END
$function$;
