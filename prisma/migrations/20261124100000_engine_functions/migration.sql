-- The engine's hot use cases as SQL functions, each called in one statement
-- (one round trip) by server/services: the statements inside run on the
-- database, next to the data, instead of one network or driver round trip each.
--
-- Every function obeys the lock order of server/services/locks.ts (call chains
-- by id, then approvals, then tasks). PL/pgSQL in READ COMMITTED takes a new
-- snapshot for every statement, so what a function reads after taking a lock
-- includes everything committed before the lock was granted.

-- A task's status from its requests (ARCHITECTURE.md, invariant 2): CANCELED
-- stays; PAUSED while one of its requests is paused, RUNNING while one runs,
-- else the status of its latest request. The tasks are locked first (lock
-- order step 3) and their requests read after, so two use cases ending
-- sibling requests at once cannot both miss the other's change. Returns the
-- tasks whose status changed.
CREATE FUNCTION tollgate_refresh_task_statuses(p_task_ids text[], p_now timestamp(3))
RETURNS TABLE (task_id text, session_id text, workspace_id text, status "RunStatus")
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM "Task" WHERE id = ANY(p_task_ids) ORDER BY id FOR NO KEY UPDATE;
  RETURN QUERY
  WITH derived AS (
    SELECT t.id, t.status AS old_status, CASE
      WHEN t.status = 'CANCELED' THEN t.status
      WHEN EXISTS (SELECT 1 FROM "Request" r WHERE r."taskId" = t.id AND r.status = 'PAUSED') THEN 'PAUSED'::"RunStatus"
      WHEN EXISTS (SELECT 1 FROM "Request" r WHERE r."taskId" = t.id AND r.status = 'RUNNING') THEN 'RUNNING'::"RunStatus"
      ELSE COALESCE((SELECT r.status FROM "Request" r WHERE r."taskId" = t.id ORDER BY r."createdAt" DESC LIMIT 1), t.status)
    END AS new_status
    FROM "Task" t WHERE t.id = ANY(p_task_ids)
  )
  UPDATE "Task" t SET status = derived.new_status, "updatedAt" = p_now
  FROM derived WHERE t.id = derived.id AND derived.new_status <> derived.old_status
  RETURNING t.id, t."sessionId", t."workspaceId", t.status;
END
$$;

-- request.complete and request.fail (server/services/requests.ts). The whole
-- use case when the calling key began the request or a request above it and
-- the request is running. Anything else (a key trusted by name, a paused
-- request, one already ended) it hands back untouched as 'elsewhere', and the
-- service runs the general path in TypeScript. The task is locked before the
-- trace row is written: that insert takes a key-share lock on the task.
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

  -- 7. The task's status, with this request ended (null when it did not change).
  SELECT changed.status INTO new_task_status FROM tollgate_refresh_task_statuses(ARRAY[req."taskId"], p_now) AS changed;

  RETURN QUERY SELECT 'ended'::text, p_status, req."sessionId", req."taskId", new_task_status, new_task_status IS NOT NULL;
END
$$;

-- request.begin (server/services/requests.ts). The whole use case when every
-- check passes and, for a follow-on request, the calling key began the task or
-- a task above it. In
-- any other case (an unknown or closed session, a parent that ended or lives
-- in another session, a task it may not continue, an idempotency key already
-- used) it writes nothing and answers 'elsewhere': the service then runs the
-- general path in TypeScript, which gives the same answer or the same error.
-- Locks: the parent's call chain, then the task; the rows it creates are
-- invisible to others until commit.
-- A concurrent retry with the same idempotency key that commits first makes the
-- request insert fail on its unique index, and the whole statement rolls back.
CREATE FUNCTION tollgate_begin_request(
  p_workspace_id text,
  p_agent_key_id text,
  p_session_id text,
  p_agent text,
  p_kind "TaskKind",
  p_task_id text,
  p_parent_request_id text,
  p_input json,
  p_idempotency_key text,
  p_resume_url text,
  p_traceparent text,
  p_new_request_id text,
  p_new_task_id text,
  p_now timestamp(3)
) RETURNS TABLE (
  outcome text,
  task_id text,
  task_status "RunStatus",
  task_changed boolean
) LANGUAGE plpgsql AS $$
DECLARE
  parent record;
  parent_id text;
  parent_task_id text;
  task record;
  key_at_or_above boolean;
  the_task_id text;
  new_task_status "RunStatus";
BEGIN
  -- 1. An idempotency key already used: the general path answers with that request, or refuses.
  IF p_idempotency_key IS NOT NULL AND EXISTS (
    SELECT 1 FROM "Request" WHERE "workspaceId" = p_workspace_id AND "idempotencyKey" = p_idempotency_key
  ) THEN
    RETURN QUERY SELECT 'elsewhere'::text, NULL::text, NULL::"RunStatus", false;
    RETURN;
  END IF;

  -- 2. The session is the workspace's and open.
  PERFORM 1 FROM "Session" WHERE id = p_session_id AND "workspaceId" = p_workspace_id AND status <> 'CLOSED';
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'elsewhere'::text, NULL::text, NULL::"RunStatus", false;
    RETURN;
  END IF;

  -- 3. The parent, if any: its whole call chain locked in id order (lock order
  --    step 1), so a concurrent cancel or completion of it is seen; it must be
  --    in this session and still running or paused. Any key may name any
  --    request of the workspace as its caller.
  IF p_parent_request_id IS NOT NULL THEN
    PERFORM 1 FROM "Request" r
    WHERE r.id IN (
      WITH RECURSIVE chain AS (
        SELECT id, "parentRequestId", 1 AS depth FROM "Request" WHERE id = p_parent_request_id AND "workspaceId" = p_workspace_id
        UNION
        SELECT up.id, up."parentRequestId", chain.depth + 1 FROM "Request" up JOIN chain ON up.id = chain."parentRequestId"
        WHERE chain.depth < 1000
      ) SELECT id FROM chain)
    ORDER BY r.id FOR NO KEY UPDATE OF r;
    SELECT r.id, r."sessionId", r."taskId", r.status INTO parent
    FROM "Request" r WHERE r.id = p_parent_request_id AND r."workspaceId" = p_workspace_id;
    IF NOT FOUND OR parent."sessionId" <> p_session_id OR parent.status NOT IN ('RUNNING', 'PAUSED') THEN
      RETURN QUERY SELECT 'elsewhere'::text, NULL::text, NULL::"RunStatus", false;
      RETURN;
    END IF;
    parent_id := parent.id;
    parent_task_id := parent."taskId";
  END IF;

  IF p_task_id IS NOT NULL THEN
    -- 4a. A follow-on request: the task locked (lock order step 3), in this
    --     session, of this agent, not canceled, and begun by this key or under
    --     a task it began.
    SELECT t.id, t."sessionId", t.agent, t.status INTO task
    FROM "Task" t WHERE t.id = p_task_id AND t."workspaceId" = p_workspace_id FOR NO KEY UPDATE OF t;
    IF NOT FOUND OR task."sessionId" <> p_session_id OR task.agent <> p_agent OR task.status = 'CANCELED' THEN
      RETURN QUERY SELECT 'elsewhere'::text, NULL::text, NULL::"RunStatus", false;
      RETURN;
    END IF;
    WITH RECURSIVE above AS (
      SELECT t.id, t."parentTaskId" AS parent, t."agentKeyId" FROM "Task" t WHERE t.id = p_task_id
      UNION
      SELECT up.id, up."parentTaskId", up."agentKeyId" FROM "Task" up JOIN above ON up.id = above.parent
    ) SELECT EXISTS (SELECT 1 FROM above WHERE above."agentKeyId" = p_agent_key_id) INTO key_at_or_above;
    IF NOT key_at_or_above THEN
      RETURN QUERY SELECT 'elsewhere'::text, NULL::text, NULL::"RunStatus", false;
      RETURN;
    END IF;
    the_task_id := task.id;
  ELSE
    -- 4b. A new task, under the parent's task when there is a parent.
    INSERT INTO "Task" (id, "workspaceId", "sessionId", "parentTaskId", agent, kind, "agentKeyId", "createdAt", "updatedAt")
    VALUES (p_new_task_id, p_workspace_id, p_session_id, parent_task_id, p_agent, p_kind, p_agent_key_id, p_now, p_now);
    the_task_id := p_new_task_id;
  END IF;

  -- 5. The request, running.
  INSERT INTO "Request" (id, "workspaceId", "sessionId", "taskId", "parentRequestId", "agentKeyId", input, "idempotencyKey", "resumeUrl", traceparent, "createdAt", "updatedAt")
  VALUES (p_new_request_id, p_workspace_id, p_session_id, the_task_id, parent_id, p_agent_key_id, p_input, p_idempotency_key, p_resume_url, p_traceparent, p_now, p_now);

  -- 6. The interaction's trace: the invocation.
  INSERT INTO "TraceEvent" ("workspaceId", "sessionId", "taskId", "requestId", category, type, name, data, "createdAt")
  VALUES (p_workspace_id, p_session_id, the_task_id, p_new_request_id, 'INTERACTION', 'invocation', p_agent,
    json_build_object('input', p_input, 'parentRequestId', parent_id), p_now);

  -- 7. The task's status with a running request in it: a follow-on may resume a
  --    finished task (null when it did not change).
  SELECT changed.status INTO new_task_status FROM tollgate_refresh_task_statuses(ARRAY[the_task_id], p_now) AS changed;

  RETURN QUERY SELECT 'begun'::text, the_task_id, new_task_status, new_task_status IS NOT NULL;
END
$$;

-- The head of a workspace's audit chain, for the next append
-- (server/services/audit.ts): the workspace's append lock taken first (lock
-- order step 4), then the newest entry read in a snapshot taken after it was
-- granted, in one round trip. The lock is held until the transaction ends.
CREATE FUNCTION tollgate_lock_audit_head(p_workspace_id text)
RETURNS TABLE (seq integer, hash text) LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('audit:' || p_workspace_id));
  RETURN QUERY SELECT a.seq, a.hash FROM "AuditEntry" a WHERE a."workspaceId" = p_workspace_id ORDER BY a.seq DESC LIMIT 1;
END
$$;
