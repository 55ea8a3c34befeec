-- A task's counts moved by a request its caller wrote (p_running and p_paused:
-- what that write added to them, -1 to 1), and its status with them, in one
-- update of the task's row. The caller holds the task's lock (lock order step
-- 3) and writes its request with the trigger off (below). Returns the task's
-- new status when it changed, else null.
--
-- Locks, in the order of server/services/locks.ts: none of its own.
CREATE OR REPLACE FUNCTION public.tollgate_count_request_in_task(p_task_id text, p_running integer, p_paused integer, p_now timestamp without time zone)
 RETURNS "RunStatus"
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
DECLARE
  changed "RunStatus";
BEGIN
  WITH derived AS MATERIALIZED (
    SELECT t.id, t.status AS old_status,
      tollgate_task_status_from_counts(t.id, t.status, t."runningRequests" + p_running, t."pausedRequests" + p_paused) AS new_status
    FROM "Task" t WHERE t.id = p_task_id
  )
  UPDATE "Task" t SET "runningRequests" = t."runningRequests" + p_running, "pausedRequests" = t."pausedRequests" + p_paused,
    status = derived.new_status, "updatedAt" = CASE WHEN derived.new_status <> derived.old_status THEN p_now ELSE t."updatedAt" END
  FROM derived WHERE t.id = derived.id
  RETURNING CASE WHEN derived.new_status <> derived.old_status THEN derived.new_status END INTO changed;
  RETURN changed;
END
$function$;
