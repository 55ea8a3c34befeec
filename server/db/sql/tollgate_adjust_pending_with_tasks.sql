-- One pending approval more (1) or fewer (-1) along each request's chain, as
-- tollgate_adjust_pending does, with the requests it moves counted in their
-- tasks and the tasks' statuses set: the requests that changed status, then
-- the tasks that did (kind 'request' or 'task').
--
-- Locks, in the order of server/services/locks.ts: tasks (3) FOR NO KEY UPDATE
-- (via tollgate_count_requests_in_tasks).
CREATE OR REPLACE FUNCTION public.tollgate_adjust_pending_with_tasks(p_request_ids text[], p_deltas integer[], p_now timestamp without time zone)
 RETURNS TABLE(kind text, id text, task_id text, session_id text, workspace_id text, status "RunStatus")
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
 SET "tollgate.request_counts" TO 'kept_by_caller'
AS $function$
DECLARE
  change record;
  task_ids text[] := '{}';
  running_deltas int[] := '{}';
  paused_deltas int[] := '{}';
BEGIN
  FOR change IN SELECT * FROM tollgate_adjust_pending(p_request_ids, p_deltas, p_now) LOOP
    RETURN QUERY SELECT 'request'::text, change.request_id, change.task_id, change.session_id, change.workspace_id, change.status;
    -- A request it moved went from RUNNING to PAUSED or back, the only changes it makes.
    task_ids := task_ids || change.task_id;
    running_deltas := running_deltas || CASE WHEN change.status = 'RUNNING' THEN 1 ELSE -1 END;
    paused_deltas := paused_deltas || CASE WHEN change.status = 'PAUSED' THEN 1 ELSE -1 END;
  END LOOP;
  RETURN QUERY SELECT 'task'::text, t.task_id, t.task_id, t.session_id, t.workspace_id, t.status
    FROM tollgate_count_requests_in_tasks(task_ids, running_deltas, paused_deltas, p_now) t;
END
$function$;
