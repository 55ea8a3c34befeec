-- A task's status from its requests (ARCHITECTURE.md, invariant 2): CANCELED
-- stays; PAUSED while one of its requests is paused, RUNNING while one runs,
-- else the status of its latest request. The tasks are locked first (lock
-- order step 3) and their requests read after, so two use cases ending
-- sibling requests at once cannot both miss the other's change. Returns the
-- tasks whose status changed.
--
-- The tasks' statuses from their counts, which nothing moved: the function above with no counts.
--
-- Locks, in the order of server/services/locks.ts: tasks (3) FOR NO KEY UPDATE
-- (via tollgate_count_requests_in_tasks).
CREATE OR REPLACE FUNCTION public.tollgate_refresh_task_statuses(p_task_ids text[], p_now timestamp without time zone)
 RETURNS TABLE(task_id text, session_id text, workspace_id text, status "RunStatus")
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
DECLARE
  unmoved int[] := array_fill(0, ARRAY[cardinality(p_task_ids)]);
BEGIN
  RETURN QUERY SELECT * FROM tollgate_count_requests_in_tasks(p_task_ids, unmoved, unmoved, p_now);
END
$function$;
