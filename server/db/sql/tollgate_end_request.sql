-- request.complete and request.fail: as in 20261124100000_engine_functions,
-- which says what each statement guarantees, but for step 7, which counts the
-- request out of its task's running ones and sets the task's status in one
-- update. The function writes one request (step 5), and counts it itself.
--
-- Locks, in the order of server/services/locks.ts: requests (1) FOR NO KEY
-- UPDATE; then tasks (3) FOR NO KEY UPDATE.
CREATE OR REPLACE FUNCTION public.tollgate_end_request(p_workspace_id text, p_request_id text, p_agent_key_id text, p_status "RunStatus", p_output json, p_error jsonb, p_now timestamp without time zone)
 RETURNS TABLE(outcome text, request_status "RunStatus", session_id text, task_id text, task_status "RunStatus", task_changed boolean)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
 SET "tollgate.request_counts" TO 'kept_by_caller'
AS $function$
DECLARE
  req record;
  key_at_or_above boolean;
  new_task_status "RunStatus";
BEGIN
  -- 1. Lock the request and every request above it, in id order (lock order step 1).
  PERFORM 1 FROM "Request" r
  WHERE r.id IN (
    WITH RECURSIVE chain AS (
      SELECT id, "parentRequestId", 1 AS depth FROM "Request" WHERE id = p_request_id AND "workspaceId" = p_workspace_id
      UNION
      SELECT up.id, up."parentRequestId", chain.depth + 1 FROM "Request" up JOIN chain ON up.id = chain."parentRequestId"
      WHERE chain.depth < 1000
    ) SELECT id FROM chain)
  ORDER BY r.id FOR NO KEY UPDATE OF r;

  -- 2. The request as it is behind the lock, and whether the key began it or a request above it.
  SELECT r.id, r."sessionId", r."taskId", r.status INTO req
  FROM "Request" r WHERE r.id = p_request_id AND r."workspaceId" = p_workspace_id;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'not_found'::text, NULL::"RunStatus", NULL::text, NULL::text, NULL::"RunStatus", false;
    RETURN;
  END IF;
  WITH RECURSIVE above AS (
    SELECT r.id, r."parentRequestId" AS parent, r."agentKeyId" FROM "Request" r WHERE r.id = p_request_id
    UNION
    SELECT up.id, up."parentRequestId", up."agentKeyId" FROM "Request" up JOIN above ON up.id = above.parent
  ) SELECT EXISTS (SELECT 1 FROM above WHERE above."agentKeyId" = p_agent_key_id) INTO key_at_or_above;

  -- 3. Only a running request whose key is in its chain ends here; the rest goes the general way.
  IF NOT key_at_or_above OR req.status <> 'RUNNING' THEN
    RETURN QUERY SELECT 'elsewhere'::text, req.status, req."sessionId", req."taskId", NULL::"RunStatus", false;
    RETURN;
  END IF;

  -- 4. Lock the task (lock order step 3; a running request has no pending approvals, step 2).
  PERFORM 1 FROM "Task" WHERE id = req."taskId" FOR NO KEY UPDATE;

  -- 5. End it, with its output or its error.
  UPDATE "Request" SET status = p_status, "endedAt" = p_now, "updatedAt" = p_now,
    output = CASE WHEN p_status = 'COMPLETED' THEN p_output ELSE output END,
    error = CASE WHEN p_status = 'FAILED' THEN p_error ELSE error END
  WHERE id = p_request_id;

  -- 6. The interaction's trace: the response or the error.
  INSERT INTO "TraceEvent" ("workspaceId", "sessionId", "taskId", "requestId", category, type, data, "createdAt")
  VALUES (p_workspace_id, req."sessionId", req."taskId", p_request_id, 'INTERACTION',
    CASE WHEN p_status = 'COMPLETED' THEN 'response' ELSE 'error' END,
    CASE WHEN p_status = 'COMPLETED' THEN json_build_object('output', p_output) ELSE json_build_object('error', p_error) END,
    p_now);

  -- 7. The task: one running request fewer, and its status with that (null when it did not change).
  new_task_status := tollgate_count_request_in_task(req."taskId", -1, 0, p_now);

  RETURN QUERY SELECT 'ended'::text, p_status, req."sessionId", req."taskId", new_task_status, new_task_status IS NOT NULL;
END
$function$;
