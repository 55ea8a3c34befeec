-- request.begin: as in 20261124123447_framework_ids, which says what each
-- statement guarantees, but for how the task counts its new running request:
-- a new task is created with it counted (RUNNING, as a task is created), and a
-- follow-on's task counts it and takes its status from that in one update
-- (step 7). The function writes one request (step 5), and counts it itself.
--
-- Locks, in the order of server/services/locks.ts: requests (1) FOR NO KEY
-- UPDATE; then tasks (3) FOR NO KEY UPDATE.
CREATE OR REPLACE FUNCTION public.tollgate_begin_request(p_workspace_id text, p_agent_key_id text, p_session_id text, p_agent text, p_kind "TaskKind", p_task_id text, p_parent_request_id text, p_input json, p_idempotency_key text, p_resume_url text, p_resume_token text, p_framework text, p_traceparent text, p_new_request_id text, p_new_task_id text, p_now timestamp without time zone)
 RETURNS TABLE(outcome text, task_id text, task_status "RunStatus", task_changed boolean)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
 SET "tollgate.request_counts" TO 'kept_by_caller'
AS $function$
DECLARE
  parent record;
  parent_id text;
  parent_task_id text;
  task record;
  key_at_or_above boolean;
  the_task_id text;
  new_task_status "RunStatus";
BEGIN
  -- 1. An idempotency key this agent key already used: the general path answers with that request, or refuses.
  IF p_idempotency_key IS NOT NULL AND EXISTS (
    SELECT 1 FROM "Request" WHERE "agentKeyId" = p_agent_key_id AND "idempotencyKey" = p_idempotency_key
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
  --    in this session and still running or paused. Only a parent this key
  --    began, or one below a request it began, is named here: another key's
  --    request needs a delegation token (or the workspace's setting), which
  --    the general path checks.
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
    SELECT r.id, r."sessionId", r."taskId", r.status, tollgate_key_began_request_or_above(r."agentKeyId", r."parentRequestId", p_agent_key_id) AS own INTO parent
    FROM "Request" r WHERE r.id = p_parent_request_id AND r."workspaceId" = p_workspace_id;
    IF NOT FOUND OR NOT parent.own OR parent."sessionId" <> p_session_id OR parent.status NOT IN ('RUNNING', 'PAUSED') THEN
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
$function$;
