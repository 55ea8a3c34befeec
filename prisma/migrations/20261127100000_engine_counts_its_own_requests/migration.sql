-- request.begin and request.complete each write one request of one task, and
-- the task's counts of running and paused requests (20261126130000) followed
-- from that write by a statement trigger: three statements over the
-- statement's transition table, the task's row written once for the counts,
-- then once more by tollgate_refresh_task_statuses for the status. Inside
-- PostgreSQL that was 0.13 ms for the trigger and 0.08 for the refresh at each
-- of the two calls, two fifths of what the pair's functions cost there
-- (pg_stat_user_functions). tollgate_begin_request and tollgate_end_request
-- now write the counts and the status together, in one update of the task's
-- row, which they have already locked (0.07 ms). The trigger still counts for
-- every other writer (the approvals' functions, the TypeScript paths, a person
-- at psql).

-- A task's status from its counts (ARCHITECTURE.md, invariant 2): CANCELED
-- stays; PAUSED while one of its requests is paused, RUNNING while one runs,
-- else the status of its latest request, looked up only then, by the end of
-- the task's index. One rule for every function that sets a task's status.
CREATE FUNCTION tollgate_task_status_from_counts(p_task_id text, p_status "RunStatus", p_running int, p_paused int)
RETURNS "RunStatus"
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
AS $$
BEGIN
  IF p_status = 'CANCELED' THEN RETURN p_status; END IF;
  IF p_paused > 0 THEN RETURN 'PAUSED'; END IF;
  IF p_running > 0 THEN RETURN 'RUNNING'; END IF;
  RETURN COALESCE((SELECT r.status FROM "Request" r WHERE r."taskId" = p_task_id ORDER BY r."createdAt" DESC LIMIT 1), p_status);
END
$$;

-- As in 20261126130000, with the rule above.
CREATE OR REPLACE FUNCTION tollgate_refresh_task_statuses(p_task_ids text[], p_now timestamp(3))
RETURNS TABLE (task_id text, session_id text, workspace_id text, status "RunStatus")
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
AS $$
BEGIN
  PERFORM 1 FROM "Task" WHERE id = ANY(p_task_ids) ORDER BY id FOR NO KEY UPDATE;
  RETURN QUERY
  WITH derived AS MATERIALIZED (
    SELECT t.id, t.status AS old_status, tollgate_task_status_from_counts(t.id, t.status, t."runningRequests", t."pausedRequests") AS new_status
    FROM "Task" t WHERE t.id = ANY(p_task_ids)
  )
  UPDATE "Task" t SET status = derived.new_status, "updatedAt" = p_now
  FROM derived WHERE t.id = derived.id AND derived.new_status <> derived.old_status
  RETURNING t.id, t."sessionId", t."workspaceId", t.status;
END
$$;

-- A task's counts moved by a request its caller wrote (p_running and p_paused:
-- what that write added to them, -1 to 1), and its status with them, in one
-- update of the task's row. The caller holds the task's lock (lock order step
-- 3) and writes its request with the trigger off (below). Returns the task's
-- new status when it changed, else null.
CREATE FUNCTION tollgate_count_request_in_task(p_task_id text, p_running int, p_paused int, p_now timestamp(3))
RETURNS "RunStatus"
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
AS $$
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
$$;

-- The counting trigger stands aside while a function that counts its own
-- request write runs: such a function says `SET tollgate.request_counts =
-- 'kept_by_caller'`, which PostgreSQL sets for the function's run only and
-- puts back when it returns, however it returns. Every other write to
-- "Request" is counted by the trigger as before.
DROP TRIGGER "Request_counted_in_task_on_insert" ON "Request";
DROP TRIGGER "Request_counted_in_task_on_update" ON "Request";
DROP TRIGGER "Request_counted_in_task_on_delete" ON "Request";
CREATE TRIGGER "Request_counted_in_task_on_insert" AFTER INSERT ON "Request"
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
WHEN (current_setting('tollgate.request_counts', true) IS DISTINCT FROM 'kept_by_caller')
EXECUTE FUNCTION tollgate_count_task_requests();
CREATE TRIGGER "Request_counted_in_task_on_update" AFTER UPDATE ON "Request"
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
WHEN (current_setting('tollgate.request_counts', true) IS DISTINCT FROM 'kept_by_caller')
EXECUTE FUNCTION tollgate_count_task_requests();
CREATE TRIGGER "Request_counted_in_task_on_delete" AFTER DELETE ON "Request"
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
WHEN (current_setting('tollgate.request_counts', true) IS DISTINCT FROM 'kept_by_caller')
EXECUTE FUNCTION tollgate_count_task_requests();

-- request.complete and request.fail: as in 20261124100000_engine_functions,
-- which says what each statement guarantees, but for step 7, which counts the
-- request out of its task's running ones and sets the task's status in one
-- update. The function writes one request (step 5), and counts it itself.
CREATE OR REPLACE FUNCTION tollgate_end_request(
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
) LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
SET tollgate.request_counts = 'kept_by_caller'
AS $$
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
$$;

-- request.begin: as in 20261124123447_framework_ids, which says what each
-- statement guarantees, but for how the task counts its new running request:
-- a new task is created with it counted (RUNNING, as a task is created), and a
-- follow-on's task counts it and takes its status from that in one update
-- (step 7). The function writes one request (step 5), and counts it itself.
CREATE OR REPLACE FUNCTION tollgate_begin_request(
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
  p_resume_token text,
  p_framework text,
  p_traceparent text,
  p_new_request_id text,
  p_new_task_id text,
  p_now timestamp(3)
) RETURNS TABLE (
  outcome text,
  task_id text,
  task_status "RunStatus",
  task_changed boolean
) LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
SET tollgate.request_counts = 'kept_by_caller'
AS $$
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
    -- 4b. A new task, under the parent's task when there is a parent, with
    --     the request of step 5 counted: RUNNING, as a task is created.
    INSERT INTO "Task" (id, "workspaceId", "sessionId", "parentTaskId", agent, kind, "agentKeyId", framework, "runningRequests", "createdAt", "updatedAt")
    VALUES (p_new_task_id, p_workspace_id, p_session_id, parent_task_id, p_agent, p_kind, p_agent_key_id, p_framework, 1, p_now, p_now);
    the_task_id := p_new_task_id;
  END IF;

  -- 5. The request, running.
  INSERT INTO "Request" (id, "workspaceId", "sessionId", "taskId", "parentRequestId", "agentKeyId", input, "idempotencyKey", "resumeUrl", "resumeToken", traceparent, "createdAt", "updatedAt")
  VALUES (p_new_request_id, p_workspace_id, p_session_id, the_task_id, parent_id, p_agent_key_id, p_input, p_idempotency_key, p_resume_url, p_resume_token, p_traceparent, p_now, p_now);

  -- 6. The interaction's trace: the invocation.
  INSERT INTO "TraceEvent" ("workspaceId", "sessionId", "taskId", "requestId", category, type, name, data, "createdAt")
  VALUES (p_workspace_id, p_session_id, the_task_id, p_new_request_id, 'INTERACTION', 'invocation', p_agent,
    json_build_object('input', p_input, 'parentRequestId', parent_id), p_now);

  -- 7. A follow-on's task: one running request more, and its status with it
  --    (a follow-on may resume a finished task; null when it did not change).
  IF p_task_id IS NOT NULL THEN
    new_task_status := tollgate_count_request_in_task(the_task_id, 1, 0, p_now);
  END IF;

  RETURN QUERY SELECT 'begun'::text, the_task_id, new_task_status, new_task_status IS NOT NULL;
END
$$;
