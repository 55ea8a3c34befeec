-- The two engine functions that wrote the rule out themselves now call it;
-- otherwise unchanged (CREATE OR REPLACE drops a function's settings, so each
-- says its own).
--
-- Locks, in the order of server/services/locks.ts: none of its own.
CREATE OR REPLACE FUNCTION public.tollgate_find_approval(p_workspace_id text, p_approval_id text, p_agent_key_id text)
 RETURNS TABLE(approval "Approval", task_agent text, key_at_or_above boolean)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
BEGIN
  RETURN QUERY
  SELECT a, t.agent, tollgate_key_began_request_or_above(r."agentKeyId", r."parentRequestId", p_agent_key_id)
  FROM "Approval" a
  JOIN "Request" r ON r.id = a."requestId"
  JOIN "Task" t ON t.id = r."taskId"
  WHERE a.id = p_approval_id AND a."workspaceId" = p_workspace_id;
END
$function$;
