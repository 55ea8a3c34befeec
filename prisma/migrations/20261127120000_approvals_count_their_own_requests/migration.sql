-- An approval pauses its chain when it opens and un-pauses it when it ends:
-- tollgate_adjust_pending moves the chain's requests between RUNNING and
-- PAUSED in one statement, after which the counting trigger
-- (20261126130000) locked the chain's tasks, counted over the statement's
-- transition table and wrote each task's row, and tollgate_refresh_task_statuses
-- wrote each row again for its status. Inside PostgreSQL the trigger took
-- 0.12 ms at each opening and each ending. As request.begin and
-- request.complete do (20261127100000), the approvals' functions now count
-- the requests they move and set their tasks' statuses in one update of each
-- task's row, with the trigger standing aside.

-- Tasks' counts moved by request writes of the caller's (one entry a write:
-- its task, and what it added to the task's running and paused requests), and
-- their statuses with them, in one update of each task's row. The tasks are
-- locked first, in id order (lock order step 3). Returns the tasks whose
-- status changed, in id order. The caller writes its requests with the
-- trigger standing aside (tollgate.request_counts = 'kept_by_caller').
-- tollgate_count_request_in_task (20261127100000) is the same update for the
-- one task of request.begin and request.complete, without the arrays and the
-- lock its callers already hold: calling this one instead cost each of them
-- 0.08 ms more inside PostgreSQL.
CREATE FUNCTION tollgate_count_requests_in_tasks(p_task_ids text[], p_running int[], p_paused int[], p_now timestamp(3))
RETURNS TABLE (task_id text, session_id text, workspace_id text, status "RunStatus")
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
AS $$
BEGIN
  PERFORM 1 FROM "Task" t WHERE t.id = ANY(p_task_ids) ORDER BY t.id FOR NO KEY UPDATE;
  RETURN QUERY
  WITH per_task AS (
    SELECT d.id, SUM(d.running)::int AS running, SUM(d.paused)::int AS paused
    FROM unnest(p_task_ids, p_running, p_paused) AS d(id, running, paused) GROUP BY d.id
  ), derived AS MATERIALIZED (
    SELECT t.id, t.status AS old_status, per_task.running, per_task.paused,
      tollgate_task_status_from_counts(t.id, t.status, t."runningRequests" + per_task.running, t."pausedRequests" + per_task.paused) AS new_status
    FROM per_task JOIN "Task" t ON t.id = per_task.id
  ), updated AS (
    UPDATE "Task" t SET "runningRequests" = t."runningRequests" + derived.running, "pausedRequests" = t."pausedRequests" + derived.paused,
      status = derived.new_status, "updatedAt" = CASE WHEN derived.new_status <> derived.old_status THEN p_now ELSE t."updatedAt" END
    FROM derived
    WHERE t.id = derived.id AND (derived.running <> 0 OR derived.paused <> 0 OR derived.new_status <> derived.old_status)
    RETURNING t.id, t."sessionId", t."workspaceId", t.status, derived.new_status <> derived.old_status AS changed
  )
  SELECT u.id, u."sessionId", u."workspaceId", u.status FROM updated u WHERE u.changed ORDER BY u.id;
END
$$;

-- The tasks' statuses from their counts, which nothing moved: the function above with no counts.
CREATE OR REPLACE FUNCTION tollgate_refresh_task_statuses(p_task_ids text[], p_now timestamp(3))
RETURNS TABLE (task_id text, session_id text, workspace_id text, status "RunStatus")
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
AS $$
DECLARE
  unmoved int[] := array_fill(0, ARRAY[cardinality(p_task_ids)]);
BEGIN
  RETURN QUERY SELECT * FROM tollgate_count_requests_in_tasks(p_task_ids, unmoved, unmoved, p_now);
END
$$;

-- One pending approval more (1) or fewer (-1) along each request's chain, as
-- tollgate_adjust_pending does, with the requests it moves counted in their
-- tasks and the tasks' statuses set: the requests that changed status, then
-- the tasks that did (kind 'request' or 'task').
CREATE FUNCTION tollgate_adjust_pending_with_tasks(p_request_ids text[], p_deltas int[], p_now timestamp(3))
RETURNS TABLE (kind text, id text, task_id text, session_id text, workspace_id text, status "RunStatus")
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
SET tollgate.request_counts = 'kept_by_caller'
AS $$
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
$$;

-- The approvals' openings and endings: as in 20261124150000_approval_functions
-- (and the migrations since that set their planning), which say what each
-- statement guarantees, with the chain and its tasks moved by the function
-- above.
CREATE OR REPLACE FUNCTION tollgate_open_approval(p_approval json, p_traces json, p_notifications json, p_audit json, p_now timestamp(3))
 RETURNS TABLE(kind text, id text, task_id text, session_id text, workspace_id text, status "RunStatus")
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $$
DECLARE
  created "Approval";
BEGIN
  -- 1. The approval, as the server built it (json keeps the arguments' order).
  INSERT INTO "Approval" SELECT * FROM json_populate_record(NULL::"Approval", p_approval) RETURNING * INTO created;

  -- 2. A pending approval: one more along the chain, which pauses; then the tasks.
  IF created.status = 'PENDING' THEN
    RETURN QUERY SELECT * FROM tollgate_adjust_pending_with_tasks(ARRAY[created."requestId"], ARRAY[1], p_now);
  END IF;

  -- 3. The approval's steps in its task's execution trace, in order.
  INSERT INTO "TraceEvent" ("workspaceId", "sessionId", "taskId", "requestId", category, type, name, data, "createdAt")
  SELECT created."workspaceId", created."sessionId", created."taskId", created."requestId", 'EXECUTION', e->>'type', created.tool, e->'data', p_now
  FROM json_array_elements(p_traces) WITH ORDINALITY AS steps(e, n) ORDER BY n;

  -- 4. Its announcements, once per channel, reason and step.
  INSERT INTO "Notification" (id, "workspaceId", "approvalId", "channelId", "channelKey", kind, reason, level, "nextAttemptAt", "createdAt")
  SELECT n.id, created."workspaceId", created.id, n."channelId", n."channelKey", n.kind, n.reason, n.level, p_now, p_now
  FROM json_populate_recordset(NULL::"Notification", p_notifications) n
  ON CONFLICT DO NOTHING;

  -- 5. A rule's decision is audited like a person's.
  IF p_audit IS NOT NULL THEN
    PERFORM tollgate_insert_audit_entry(p_audit);
  END IF;
END
$$;

CREATE OR REPLACE FUNCTION tollgate_finish_approval(p_approval_id text, p_ending json, p_delivery json, p_trace json, p_audit json, p_now timestamp(3))
 RETURNS TABLE(kind text, id text, task_id text, session_id text, workspace_id text, status "RunStatus")
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $$
DECLARE
  ended "Approval";
BEGIN
  -- 1. Write-once (invariant 4): only a pending approval ends, so exactly one
  --    ending wins. Arguments stay json, in the order they were given.
  UPDATE "Approval" a SET
    status = (p_ending->>'status')::"ApprovalStatus",
    "decisionAction" = (p_ending->>'decisionAction')::"DecisionAction",
    "decisionMessage" = p_ending->>'decisionMessage',
    "approvedArgs" = CASE WHEN json_typeof(p_ending->'approvedArgs') = 'null' THEN NULL ELSE p_ending->'approvedArgs' END,
    "decidedBy" = p_ending->>'decidedBy',
    "decidedById" = p_ending->>'decidedById',
    "deciderKind" = (p_ending->>'deciderKind')::"DeciderKind",
    "decidedAt" = p_now,
    receipt = p_ending->>'receipt'
  WHERE a.id = p_approval_id AND a.status = 'PENDING'
  RETURNING a.* INTO ended;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  RETURN QUERY SELECT 'approval'::text, ended.id, ended."taskId", ended."sessionId", ended."workspaceId", NULL::"RunStatus";

  -- 2. One fewer pending approval along the chain; the requests it un-pauses,
  --    and their tasks' counts and statuses (lock order step 3).
  RETURN QUERY SELECT * FROM tollgate_adjust_pending_with_tasks(ARRAY[ended."requestId"], ARRAY[-1], p_now);

  -- 3. The decision's webhook delivery, queued with the decision so it cannot be lost.
  IF p_delivery IS NOT NULL THEN
    INSERT INTO "DecisionDelivery" (id, "workspaceId", "approvalId", url, "nextAttemptAt", "createdAt")
    VALUES (p_delivery->>'id', ended."workspaceId", ended.id, p_delivery->>'url', p_now, p_now);
  END IF;

  -- 4. The approval's step in its task's execution trace.
  INSERT INTO "TraceEvent" ("workspaceId", "sessionId", "taskId", "requestId", category, type, name, data, "createdAt")
  VALUES (ended."workspaceId", ended."sessionId", ended."taskId", ended."requestId", 'EXECUTION', 'approval.decided', ended.tool, p_trace, p_now);

  -- 5. The audit entry, as the server chained it.
  PERFORM tollgate_insert_audit_entry(p_audit);
END
$$;
