-- Ending an approval (a decision, a quorum reached, a timeout) in two
-- statements: one that takes every lock in the order of
-- server/services/locks.ts and returns the approval as it is behind its lock,
-- and one that writes the ending with everything that changes with it. The
-- server signs the receipt and computes the audit entry's MAC between the two,
-- since neither key may reach the database.

-- A set of requests and every request above them (their call chains), with
-- their tasks. Reads only: the callers lock.
CREATE FUNCTION tollgate_call_chains(p_request_ids text[])
RETURNS TABLE (request_id text, task_id text, resume_url text)
LANGUAGE sql STABLE AS $$
  WITH RECURSIVE chain AS (
    SELECT r.id, r."parentRequestId", 1 AS depth FROM "Request" r WHERE r.id = ANY(p_request_ids)
    UNION
    SELECT up.id, up."parentRequestId", chain.depth + 1 FROM "Request" up JOIN chain ON up.id = chain."parentRequestId"
    WHERE chain.depth < 1000
  )
  SELECT r.id, r."taskId", r."resumeUrl" FROM "Request" r WHERE r.id IN (SELECT chain.id FROM chain)
$$;

-- Lock order step 1: these requests' call chains, in id order, in one
-- statement. Returns the locked requests with their tasks and webhook address.
CREATE FUNCTION tollgate_lock_chains(p_request_ids text[])
RETURNS TABLE (request_id text, task_id text, resume_url text)
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY
  SELECT r.id, r."taskId", r."resumeUrl" FROM "Request" r
  WHERE r.id IN (SELECT c.request_id FROM tollgate_call_chains(p_request_ids) c)
  ORDER BY r.id FOR NO KEY UPDATE OF r;
END
$$;

-- The pending-approval counts along call chains (ARCHITECTURE.md, invariant
-- 1): each delta is added to its request and every request above it, summed
-- where chains meet so each row is updated once, and each active request's
-- status follows its count (PAUSED while above zero). The caller holds the
-- chains' locks, so the row joined as `old` is the row being updated and its
-- status the one before this change. Returns the requests whose status changed.
CREATE FUNCTION tollgate_adjust_pending(p_request_ids text[], p_deltas int[], p_now timestamp(3))
RETURNS TABLE (request_id text, task_id text, session_id text, workspace_id text, status "RunStatus")
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY
  WITH RECURSIVE seed AS (
    SELECT * FROM unnest(p_request_ids, p_deltas) AS s(id, delta)
  ), chain AS (
    SELECT r.id, r."parentRequestId", seed.delta, 1 AS depth FROM "Request" r JOIN seed ON r.id = seed.id
    UNION ALL
    SELECT r.id, r."parentRequestId", chain.delta, chain.depth + 1
    FROM "Request" r JOIN chain ON r.id = chain."parentRequestId"
    WHERE chain.depth < 1000
  ), totals AS (
    SELECT chain.id, SUM(chain.delta)::int AS delta FROM chain GROUP BY chain.id
  ), updated AS (
    UPDATE "Request" r
    SET "pendingApprovals" = GREATEST(r."pendingApprovals" + totals.delta, 0),
        status = CASE
          WHEN r.status IN ('RUNNING', 'PAUSED') AND r."pendingApprovals" + totals.delta > 0 THEN 'PAUSED'::"RunStatus"
          WHEN r.status IN ('RUNNING', 'PAUSED') THEN 'RUNNING'::"RunStatus"
          ELSE r.status
        END,
        "updatedAt" = p_now
    FROM totals JOIN "Request" old ON old.id = totals.id
    WHERE r.id = totals.id
    RETURNING r.id, r."taskId", r."sessionId", r."workspaceId", r.status AS new_status, old.status AS old_status
  )
  SELECT u.id, u."taskId", u."sessionId", u."workspaceId", u.new_status FROM updated u
  WHERE u.new_status <> u.old_status ORDER BY u.id;
END
$$;

-- An audit entry as the server wrote it: content, link and MAC computed from
-- the head it read behind the workspace's audit lock (server/services/audit.ts).
CREATE FUNCTION tollgate_insert_audit_entry(p_audit json) RETURNS void LANGUAGE sql AS $$
  INSERT INTO "AuditEntry" ("workspaceId", seq, "actorType", "actorId", "actorLabel", action, "subjectType", "subjectId", data, "prevHash", hash, "macVersion", "createdAt")
  SELECT e."workspaceId", e.seq, e."actorType", e."actorId", e."actorLabel", e.action, e."subjectType", e."subjectId", e.data, e."prevHash", e.hash, e."macVersion", e."createdAt"
  FROM json_populate_record(NULL::"AuditEntry", p_audit) e
$$;

-- Everything ending an approval writes, locked in the lock order
-- (server/services/locks.ts): 1. its request's call chain; 2. the approval;
-- 3. while it is pending, the tasks of that chain, whose statuses the ending
-- may change. Step 4, the workspace's audit lock, is taken in the same
-- statement by tollgate_lock_audit_head (server/services/approvals/
-- finish-approval.ts). Returns the approval as it is behind its lock, or
-- nothing when the workspace has no such approval.
CREATE FUNCTION tollgate_lock_approval_ending(p_workspace_id text, p_approval_id text)
RETURNS SETOF "Approval" LANGUAGE plpgsql AS $$
DECLARE
  the_request_id text;
  chain_task_ids text[];
  locked "Approval";
BEGIN
  -- An approval never moves to another request, so its request is read unlocked.
  SELECT a."requestId" INTO the_request_id FROM "Approval" a WHERE a.id = p_approval_id AND a."workspaceId" = p_workspace_id;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  SELECT array_agg(c.task_id) INTO chain_task_ids FROM tollgate_lock_chains(ARRAY[the_request_id]) c;
  SELECT * INTO locked FROM "Approval" a WHERE a.id = p_approval_id FOR NO KEY UPDATE;
  IF locked.status = 'PENDING' THEN
    PERFORM 1 FROM "Task" t WHERE t.id = ANY(chain_task_ids) ORDER BY t.id FOR NO KEY UPDATE;
  END IF;
  RETURN NEXT locked;
END
$$;

-- Ends a pending approval, the caller holding tollgate_lock_approval_ending's
-- locks and the audit lock. p_ending holds the decision's columns as the
-- server wrote them (with the signed receipt); p_delivery the webhook delivery
-- to queue, if the request has an address; p_trace the trace event's data;
-- p_audit the audit entry, chained and MACed by the server on the head it read
-- behind the audit lock. Returns one 'approval' row when the approval ended,
-- then a 'request' row per request and a 'task' row per task whose status
-- changed; nothing at all when the approval was no longer pending.
CREATE FUNCTION tollgate_finish_approval(
  p_approval_id text,
  p_ending json,
  p_delivery json,
  p_trace json,
  p_audit json,
  p_now timestamp(3)
) RETURNS TABLE (kind text, id text, task_id text, session_id text, workspace_id text, status "RunStatus")
LANGUAGE plpgsql AS $$
DECLARE
  ended "Approval";
  change record;
  changed_tasks text[] := '{}';
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

  -- 2. One fewer pending approval along the chain; the requests it un-pauses.
  FOR change IN SELECT * FROM tollgate_adjust_pending(ARRAY[ended."requestId"], ARRAY[-1], p_now) LOOP
    RETURN QUERY SELECT 'request'::text, change.request_id, change.task_id, change.session_id, change.workspace_id, change.status;
    changed_tasks := changed_tasks || change.task_id;
  END LOOP;

  -- 3. Their tasks' statuses (locked already, lock order step 3).
  RETURN QUERY SELECT 'task'::text, t.task_id, t.task_id, t.session_id, t.workspace_id, t.status
    FROM tollgate_refresh_task_statuses(changed_tasks, p_now) t;

  -- 4. The decision's webhook delivery, queued with the decision so it cannot be lost.
  IF p_delivery IS NOT NULL THEN
    INSERT INTO "DecisionDelivery" (id, "workspaceId", "approvalId", url, "nextAttemptAt", "createdAt")
    VALUES (p_delivery->>'id', ended."workspaceId", ended.id, p_delivery->>'url', p_now, p_now);
  END IF;

  -- 5. The approval's step in its task's execution trace.
  INSERT INTO "TraceEvent" ("workspaceId", "sessionId", "taskId", "requestId", category, type, name, data, "createdAt")
  VALUES (ended."workspaceId", ended."sessionId", ended."taskId", ended."requestId", 'EXECUTION', 'approval.decided', ended.tool, p_trace, p_now);

  -- 6. The audit entry, as the server chained it.
  PERFORM tollgate_insert_audit_entry(p_audit);
END
$$;

-- approval.request in two statements (three when a rule decides): this one
-- locks the request's call chain (lock order step 1) and then, in a snapshot
-- taken after the lock was granted, reads the request and everything the gate
-- depends on: the task's agent, the session's metadata, the thread's config
-- and the workspace's rules version, defaults and channels version. Whether
-- the key began the request or a request above it comes with it; the server
-- applies the authority rule (a key trusted by name acts on any request).
-- Returns nothing when the workspace has no such request.
CREATE FUNCTION tollgate_lock_request_for_approval(p_workspace_id text, p_request_id text, p_agent_key_id text)
RETURNS TABLE (
  id text,
  session_id text,
  task_id text,
  status "RunStatus",
  agent text,
  key_at_or_above boolean,
  metadata jsonb,
  config jsonb,
  policy_version integer,
  default_timeout_ms integer,
  default_on_timeout text,
  default_route jsonb,
  channel_version integer
) LANGUAGE plpgsql AS $$
BEGIN
  -- Another workspace's request is neither locked nor read.
  PERFORM 1 FROM "Request" r WHERE r.id = p_request_id AND r."workspaceId" = p_workspace_id;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  PERFORM 1 FROM tollgate_lock_chains(ARRAY[p_request_id]);
  RETURN QUERY
  SELECT r.id, r."sessionId", r."taskId", r.status, t.agent,
    EXISTS (
      WITH RECURSIVE above AS (
        SELECT r.id AS up_id, r."parentRequestId" AS parent, r."agentKeyId" AS key_id
        UNION
        SELECT up.id, up."parentRequestId", up."agentKeyId" FROM "Request" up JOIN above ON up.id = above.parent
      ) SELECT 1 FROM above WHERE above.key_id = p_agent_key_id),
    s.metadata, c.config, w."policyVersion", w."defaultTimeoutMs", w."defaultOnTimeout"::text, w."defaultRoute", w."channelVersion"
  FROM "Request" r
  JOIN "Task" t ON t.id = r."taskId"
  JOIN "Session" s ON s.id = r."sessionId"
  JOIN "Workspace" w ON w.id = r."workspaceId"
  LEFT JOIN "ThreadConfig" c ON c."taskId" = r."taskId"
  WHERE r.id = p_request_id;
END
$$;

-- Writes a new approval with everything that comes with it, the caller
-- holding the chain's lock (and, for one a rule decided, the audit lock):
-- p_approval is the whole row as the server built it; p_traces the trace
-- events' types and data; p_notifications the announcements to send;
-- p_audit the audit entry of a rule's decision, chained and MACed by the
-- server. A pending approval pauses its request and every caller above it.
-- Returns a 'request' row per request and a 'task' row per task whose status
-- changed. A repeated idempotency key or framework id fails the insert on its
-- unique index and the whole statement writes nothing.
CREATE FUNCTION tollgate_open_approval(p_approval json, p_traces json, p_notifications json, p_audit json, p_now timestamp(3))
RETURNS TABLE (kind text, id text, task_id text, session_id text, workspace_id text, status "RunStatus")
LANGUAGE plpgsql AS $$
DECLARE
  created "Approval";
  change record;
  changed_tasks text[] := '{}';
BEGIN
  -- 1. The approval, as the server built it (json keeps the arguments' order).
  INSERT INTO "Approval" SELECT * FROM json_populate_record(NULL::"Approval", p_approval) RETURNING * INTO created;

  -- 2. A pending approval: one more along the chain, which pauses; then the tasks.
  IF created.status = 'PENDING' THEN
    FOR change IN SELECT * FROM tollgate_adjust_pending(ARRAY[created."requestId"], ARRAY[1], p_now) LOOP
      RETURN QUERY SELECT 'request'::text, change.request_id, change.task_id, change.session_id, change.workspace_id, change.status;
      changed_tasks := changed_tasks || change.task_id;
    END LOOP;
    RETURN QUERY SELECT 'task'::text, t.task_id, t.task_id, t.session_id, t.workspace_id, t.status
      FROM tollgate_refresh_task_statuses(changed_tasks, p_now) t;
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
