-- A task's status from its counts (ARCHITECTURE.md, invariant 2): CANCELED
-- stays; PAUSED while one of its requests is paused, RUNNING while one runs,
-- else the status of its latest request, looked up only then, by the end of
-- the task's index. One rule for every function that sets a task's status.
--
-- Locks, in the order of server/services/locks.ts: none of its own.
CREATE OR REPLACE FUNCTION public.tollgate_task_status_from_counts(p_task_id text, p_status "RunStatus", p_running integer, p_paused integer)
 RETURNS "RunStatus"
 LANGUAGE plpgsql
 STABLE
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
BEGIN
  IF p_status = 'CANCELED' THEN RETURN p_status; END IF;
  IF p_paused > 0 THEN RETURN 'PAUSED'; END IF;
  IF p_running > 0 THEN RETURN 'RUNNING'; END IF;
  RETURN COALESCE((SELECT r.status FROM "Request" r WHERE r."taskId" = p_task_id ORDER BY r."createdAt" DESC LIMIT 1), p_status);
END
$function$;
