-- approval.request in one statement when nothing it was decided on changed:
-- the server reads what the gate depends on without a lock, evaluates the
-- policy and builds the approval, and tollgate_open_approval_if_unchanged
-- locks the chain, checks behind the lock that those facts (and, for a rule's
-- decision, the audit head) are as they were read, and writes. When they are
-- not, it writes nothing and answers 'stale', and the server takes the path
-- that reads them behind the lock (tollgate_lock_request_for_approval).

-- What a gate decision depends on, for one request of the workspace: the
-- request, the task's agent, whether the key began the request or one above
-- it, the session's metadata, the thread's config and the workspace's rules
-- version, defaults and channels version, with a fingerprint of the ones that
-- can change (a request's own status is checked on its own). Called behind a
-- lock, it reads in a snapshot taken after the lock was granted. PL/pgSQL,
-- not SQL, for its plans: PostgreSQL plans a SQL function's query again on
-- every call, a PL/pgSQL function's once per connection.
CREATE TYPE tollgate_gate_fact_row AS (
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
  channel_version integer,
  fingerprint text
);

CREATE FUNCTION tollgate_gate_facts(p_workspace_id text, p_request_id text, p_agent_key_id text)
RETURNS SETOF tollgate_gate_fact_row LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY
  SELECT r.id, r."sessionId", r."taskId", r.status, t.agent,
    EXISTS (
      WITH RECURSIVE above AS (
        SELECT r.id AS up_id, r."parentRequestId" AS parent, r."agentKeyId" AS key_id
        UNION
        SELECT up.id, up."parentRequestId", up."agentKeyId" FROM "Request" up JOIN above ON up.id = above.parent
      ) SELECT 1 FROM above WHERE above.key_id = p_agent_key_id),
    s.metadata, c.config, w."policyVersion", w."defaultTimeoutMs", w."defaultOnTimeout"::text, w."defaultRoute", w."channelVersion",
    md5(ROW(t.agent, s.metadata, c.config, w."policyVersion", w."defaultTimeoutMs", w."defaultOnTimeout", w."defaultRoute", w."channelVersion")::text)
  FROM "Request" r
  JOIN "Task" t ON t.id = r."taskId"
  JOIN "Session" s ON s.id = r."sessionId"
  JOIN "Workspace" w ON w.id = r."workspaceId"
  LEFT JOIN "ThreadConfig" c ON c."taskId" = r."taskId"
  WHERE r.id = p_request_id AND r."workspaceId" = p_workspace_id;
END
$$;

-- Statement 1 of the one-statement path: the facts, unlocked, with the
-- workspace's audit head as it is now (a rule's decision chains to it).
CREATE FUNCTION tollgate_read_request_for_approval(
  p_workspace_id text,
  p_request_id text,
  p_agent_key_id text,
  OUT facts tollgate_gate_fact_row,
  OUT audit_seq integer,
  OUT audit_hash text
) RETURNS SETOF record LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY
  SELECT f, h.seq, h.hash
  FROM tollgate_gate_facts(p_workspace_id, p_request_id, p_agent_key_id) f
  LEFT JOIN LATERAL (
    SELECT a.seq, a.hash FROM "AuditEntry" a WHERE a."workspaceId" = p_workspace_id ORDER BY a.seq DESC LIMIT 1
  ) h ON true;
END
$$;

-- The locking path's first statement, now reading the same facts: it locks
-- the request's call chain (lock order step 1) and then, in a snapshot taken
-- after the lock was granted, reads them. Returns nothing when the workspace
-- has no such request (another workspace's request is neither locked nor read).
DROP FUNCTION tollgate_lock_request_for_approval(text, text, text);
CREATE FUNCTION tollgate_lock_request_for_approval(p_workspace_id text, p_request_id text, p_agent_key_id text)
RETURNS SETOF tollgate_gate_fact_row LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM "Request" r WHERE r.id = p_request_id AND r."workspaceId" = p_workspace_id;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  PERFORM 1 FROM tollgate_lock_chains(ARRAY[p_request_id]);
  RETURN QUERY SELECT * FROM tollgate_gate_facts(p_workspace_id, p_request_id, p_agent_key_id);
END
$$;

-- Statement 2 of the one-statement path, a transaction of its own. p_approval,
-- p_traces, p_notifications and p_audit are tollgate_open_approval's;
-- p_fingerprint and p_audit_seq are what the server read and built them on.
-- Returns a 'stale' row and writes nothing when the request ended or the
-- facts changed since, a 'contended' row when (with p_audit) another entry
-- took the audit head meanwhile; else what tollgate_open_approval returns.
CREATE FUNCTION tollgate_open_approval_if_unchanged(
  p_workspace_id text,
  p_agent_key_id text,
  p_fingerprint text,
  p_audit_seq integer,
  p_approval json,
  p_traces json,
  p_notifications json,
  p_audit json,
  p_now timestamp(3)
) RETURNS TABLE (kind text, id text, task_id text, session_id text, workspace_id text, status "RunStatus")
LANGUAGE plpgsql AS $$
DECLARE
  the_request_id text := p_approval->>'requestId';
  facts record;
  head_seq integer;
BEGIN
  -- 1. Lock order step 1: the request's call chain (another workspace's request is not locked).
  PERFORM 1 FROM "Request" r WHERE r.id = the_request_id AND r."workspaceId" = p_workspace_id;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'stale'::text, the_request_id, NULL::text, NULL::text, NULL::text, NULL::"RunStatus";
    RETURN;
  END IF;
  PERFORM 1 FROM tollgate_lock_chains(ARRAY[the_request_id]);

  -- 2. Behind the lock: the request still runs, and the gate's facts are the ones read.
  SELECT f.status, f.fingerprint INTO facts FROM tollgate_gate_facts(p_workspace_id, the_request_id, p_agent_key_id) f;
  IF NOT FOUND OR facts.status NOT IN ('RUNNING', 'PAUSED') OR facts.fingerprint IS DISTINCT FROM p_fingerprint THEN
    RETURN QUERY SELECT 'stale'::text, the_request_id, NULL::text, NULL::text, NULL::text, NULL::"RunStatus";
    RETURN;
  END IF;

  -- 3. A rule's decision: lock order step 4, the workspace's audit lock, and
  -- its head still the entry the server chained the decision to.
  IF p_audit IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock(hashtext('audit:' || p_workspace_id));
    SELECT a.seq INTO head_seq FROM "AuditEntry" a WHERE a."workspaceId" = p_workspace_id ORDER BY a.seq DESC LIMIT 1;
    IF head_seq IS DISTINCT FROM p_audit_seq THEN
      RETURN QUERY SELECT 'contended'::text, the_request_id, NULL::text, NULL::text, NULL::text, NULL::"RunStatus";
      RETURN;
    END IF;
  END IF;

  -- 4. The approval with its trace, announcements and audit entry; a pending one pauses its chain.
  RETURN QUERY SELECT * FROM tollgate_open_approval(p_approval, p_traces, p_notifications, p_audit, p_now);
END
$$;
