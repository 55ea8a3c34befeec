-- What a gate decision depends on, for one request of the workspace: the
-- request, the task's agent, whether the key began the request or one above
-- it, the session's metadata, the thread's config and the workspace's rules
-- version, defaults and channels version, with a fingerprint of the ones that
-- can change (a request's own status is checked on its own). Called behind a
-- lock, it reads in a snapshot taken after the lock was granted. PL/pgSQL,
-- not SQL, for its plans: PostgreSQL plans a SQL function's query again on
-- every call, a PL/pgSQL function's once per connection.
--
-- Locks, in the order of server/services/locks.ts: none of its own.
CREATE OR REPLACE FUNCTION public.tollgate_gate_facts(p_workspace_id text, p_request_id text, p_agent_key_id text)
 RETURNS SETOF tollgate_gate_fact_row
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
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
$function$;
