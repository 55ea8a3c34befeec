-- Statement 1 of the one-statement path: the facts, unlocked, with the
-- workspace's audit head as it is now (a rule's decision chains to it).
--
-- Locks, in the order of server/services/locks.ts: none of its own.
CREATE OR REPLACE FUNCTION public.tollgate_read_request_for_approval(p_workspace_id text, p_request_id text, p_agent_key_id text, OUT facts tollgate_gate_fact_row, OUT audit_seq integer, OUT audit_hash text)
 RETURNS SETOF record
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
BEGIN
  RETURN QUERY
  SELECT f, h.seq, h.hash
  FROM tollgate_gate_facts(p_workspace_id, p_request_id, p_agent_key_id) f
  LEFT JOIN LATERAL (
    SELECT a.seq, a.hash FROM "AuditEntry" a WHERE a."workspaceId" = p_workspace_id ORDER BY a.seq DESC LIMIT 1
  ) h ON true;
END
$function$;
