-- The database half of the authority rule (server/domain/authority.ts),
-- as two functions: whether a key began a request or any request above it in
-- the call chain, and the same for a task and the task tree. The engine's
-- reads call them (tollgate_gate_facts, tollgate_find_approval, below), and
-- so do the statements the server sends (keyAtOrAbove in
-- server/services/authority.ts), where the rule was written out in each; here
-- it is planned once per connection. tollgate_begin_request and
-- tollgate_end_request still ask it in their own words, as they were made. The row's own key and parent come from the
-- caller, which has read the row, so a key's call on its own row reads
-- nothing more. A null key matches no row; UNION (not UNION ALL) ends even on
-- a cycle.
CREATE FUNCTION tollgate_key_began_request_or_above(p_own_key text, p_parent_id text, p_agent_key_id text)
RETURNS boolean LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  IF p_own_key = p_agent_key_id THEN RETURN true; END IF;
  IF p_parent_id IS NULL OR p_agent_key_id IS NULL THEN RETURN false; END IF;
  RETURN EXISTS (
    WITH RECURSIVE above AS (
      SELECT up.id, up."parentRequestId" AS parent, up."agentKeyId" FROM "Request" up WHERE up.id = p_parent_id
      UNION
      SELECT up.id, up."parentRequestId", up."agentKeyId" FROM "Request" up JOIN above ON up.id = above.parent
    )
    SELECT 1 FROM above WHERE above."agentKeyId" = p_agent_key_id);
END
$$;

CREATE FUNCTION tollgate_key_began_task_or_above(p_own_key text, p_parent_id text, p_agent_key_id text)
RETURNS boolean LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  IF p_own_key = p_agent_key_id THEN RETURN true; END IF;
  IF p_parent_id IS NULL OR p_agent_key_id IS NULL THEN RETURN false; END IF;
  RETURN EXISTS (
    WITH RECURSIVE above AS (
      SELECT up.id, up."parentTaskId" AS parent, up."agentKeyId" FROM "Task" up WHERE up.id = p_parent_id
      UNION
      SELECT up.id, up."parentTaskId", up."agentKeyId" FROM "Task" up JOIN above ON up.id = above.parent
    )
    SELECT 1 FROM above WHERE above."agentKeyId" = p_agent_key_id);
END
$$;

-- The two engine functions that wrote the rule out themselves now call it;
-- otherwise unchanged (CREATE OR REPLACE drops a function's settings, so each
-- says its own).
CREATE OR REPLACE FUNCTION tollgate_find_approval(p_workspace_id text, p_approval_id text, p_agent_key_id text)
RETURNS TABLE (approval "Approval", task_agent text, key_at_or_above boolean)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN QUERY
  SELECT a, t.agent, tollgate_key_began_request_or_above(r."agentKeyId", r."parentRequestId", p_agent_key_id)
  FROM "Approval" a
  JOIN "Request" r ON r.id = a."requestId"
  JOIN "Task" t ON t.id = r."taskId"
  WHERE a.id = p_approval_id AND a."workspaceId" = p_workspace_id;
END
$$;

CREATE OR REPLACE FUNCTION tollgate_gate_facts(p_workspace_id text, p_request_id text, p_agent_key_id text)
RETURNS SETOF tollgate_gate_fact_row LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN QUERY
  SELECT r.id, r."sessionId", r."taskId", r.status, t.agent,
    tollgate_key_began_request_or_above(r."agentKeyId", r."parentRequestId", p_agent_key_id),
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
