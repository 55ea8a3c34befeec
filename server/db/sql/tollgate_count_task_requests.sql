-- The counts are kept by the database for every statement that writes a
-- request, the engine's functions and the TypeScript paths alike, so no
-- writer can forget them. One trigger a statement, not a row: the tasks a
-- statement changes are locked together in id order (lock order step 3,
-- server/services/locks.ts), where locking them row by row would take them in
-- whatever order the rows were written. A use case writes its requests after
-- it has locked their chains and approvals (steps 1 and 2), so these task
-- locks are taken where its own refresh of the tasks would take them.
--
-- Locks, in the order of server/services/locks.ts: tasks (3) FOR NO KEY UPDATE.
CREATE OR REPLACE FUNCTION public.tollgate_count_task_requests()
 RETURNS trigger
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
DECLARE
  -- One entry a written row: its task, and what it adds to the task's counts.
  row_tasks text[];
  row_running int[];
  row_paused int[];
  changed record;
BEGIN
  -- A written row counts as it is now and, negated, as it was, so a request
  -- whose status did not change adds nothing. (A transition table exists only
  -- for the events that have it, hence a query an event.)
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg(n."taskId"), array_agg((n.status = 'RUNNING')::int), array_agg((n.status = 'PAUSED')::int)
    INTO row_tasks, row_running, row_paused FROM new_rows n;
  ELSIF TG_OP = 'UPDATE' THEN
    SELECT array_agg(w.task_id), array_agg(w.running), array_agg(w.paused)
    INTO row_tasks, row_running, row_paused FROM (
      SELECT n."taskId" AS task_id, (n.status = 'RUNNING')::int AS running, (n.status = 'PAUSED')::int AS paused FROM new_rows n
      UNION ALL
      SELECT o."taskId", -(o.status = 'RUNNING')::int, -(o.status = 'PAUSED')::int FROM old_rows o
    ) w;
  ELSE
    SELECT array_agg(o."taskId"), array_agg(-(o.status = 'RUNNING')::int), array_agg(-(o.status = 'PAUSED')::int)
    INTO row_tasks, row_running, row_paused FROM old_rows o;
  END IF;

  -- The tasks whose counts changed, locked in id order (lock order step 3), then counted.
  FOR changed IN
    WITH per_task AS (
      SELECT w.task_id, SUM(w.running)::int AS running, SUM(w.paused)::int AS paused
      FROM unnest(row_tasks, row_running, row_paused) AS w(task_id, running, paused) GROUP BY w.task_id
    )
    SELECT t.id, per_task.running, per_task.paused FROM "Task" t JOIN per_task ON t.id = per_task.task_id
    WHERE per_task.running <> 0 OR per_task.paused <> 0
    ORDER BY t.id FOR NO KEY UPDATE OF t
  LOOP
    UPDATE "Task" SET "runningRequests" = "runningRequests" + changed.running, "pausedRequests" = "pausedRequests" + changed.paused
    WHERE id = changed.id;
  END LOOP;
  RETURN NULL;
END
$function$;

CREATE TRIGGER "Request_counted_in_task_on_delete" AFTER DELETE ON public."Request" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT WHEN ((current_setting('tollgate.request_counts'::text, true) IS DISTINCT FROM 'kept_by_caller'::text)) EXECUTE FUNCTION tollgate_count_task_requests();

CREATE TRIGGER "Request_counted_in_task_on_insert" AFTER INSERT ON public."Request" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT WHEN ((current_setting('tollgate.request_counts'::text, true) IS DISTINCT FROM 'kept_by_caller'::text)) EXECUTE FUNCTION tollgate_count_task_requests();

CREATE TRIGGER "Request_counted_in_task_on_update" AFTER UPDATE ON public."Request" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT WHEN ((current_setting('tollgate.request_counts'::text, true) IS DISTINCT FROM 'kept_by_caller'::text)) EXECUTE FUNCTION tollgate_count_task_requests();
