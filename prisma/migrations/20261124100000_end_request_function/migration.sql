-- request.complete and request.fail in one round trip (server/services/requests.ts).
--
-- The function does the whole use case when the calling key began the request
-- or a request above it and the request has nothing paused under it. Anything
-- else (a key trusted by name, a paused request, one already ended) it hands
-- back untouched as 'elsewhere', with the reason, and the service runs the
-- general path in TypeScript. It obeys the lock order of server/services/locks.ts:
-- the call chain by id, then the task.
--
-- PL/pgSQL in READ COMMITTED takes a new snapshot for every statement, so the
-- task's requests are counted after the task's lock is held and see every
-- sibling that ended before it (the lock-then-recount of cascade.ts). The task
-- is locked before the trace row is written: that insert takes a key-share lock
-- on the task, and two siblings each holding one while waiting to lock the task
-- for update would deadlock.
CREATE FUNCTION tollgate_end_request(
  p_workspace_id text,
  p_request_id text,
  p_agent_key_id text,
  p_status "RunStatus",
  p_output json,
  p_error jsonb,
  p_now timestamp(3)
) RETURNS TABLE (
  outcome text,
  request_status "RunStatus",
  session_id text,
  task_id text,
  task_status "RunStatus",
  task_changed boolean
) LANGUAGE plpgsql AS $$
DECLARE
  req record;
  key_at_or_above boolean;
  active_statuses "RunStatus"[];
  old_task_status "RunStatus";
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
  SELECT status INTO old_task_status FROM "Task" WHERE id = req."taskId" FOR NO KEY UPDATE;

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

  -- 7. Derive the task's status from its requests, read after its lock was taken
  --    (lifecycle.taskStatusFor): CANCELED stays; PAUSED while one is paused,
  --    RUNNING while one runs, else the status of the latest ended request.
  SELECT array_agg(status) INTO active_statuses FROM "Request"
  WHERE "taskId" = req."taskId" AND status IN ('RUNNING', 'PAUSED');
  new_task_status := CASE
    WHEN old_task_status = 'CANCELED' THEN old_task_status
    WHEN 'PAUSED' = ANY(active_statuses) THEN 'PAUSED'::"RunStatus"
    WHEN 'RUNNING' = ANY(active_statuses) THEN 'RUNNING'::"RunStatus"
    ELSE COALESCE((SELECT status FROM "Request" WHERE "taskId" = req."taskId" AND status NOT IN ('RUNNING', 'PAUSED')
                   ORDER BY "createdAt" DESC LIMIT 1), old_task_status)
  END;
  IF new_task_status <> old_task_status THEN
    UPDATE "Task" SET status = new_task_status, "updatedAt" = p_now WHERE id = req."taskId";
  END IF;

  RETURN QUERY SELECT 'ended'::text, p_status, req."sessionId", req."taskId", new_task_status, new_task_status <> old_task_status;
END
$$;
