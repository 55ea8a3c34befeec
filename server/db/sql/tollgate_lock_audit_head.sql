-- The head of a workspace's audit chain, for the next append
-- (server/services/audit.ts): the workspace's append lock taken first (lock
-- order step 4), then the newest entry read in a snapshot taken after it was
-- granted, in one round trip. The lock is held until the transaction ends.
--
-- Locks, in the order of server/services/locks.ts: the audit chain head's
-- advisory lock (4).
CREATE OR REPLACE FUNCTION public.tollgate_lock_audit_head(p_workspace_id text)
 RETURNS TABLE(seq integer, hash text)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('audit:' || p_workspace_id));
  RETURN QUERY SELECT a.seq, a.hash FROM "AuditEntry" a WHERE a."workspaceId" = p_workspace_id ORDER BY a.seq DESC LIMIT 1;
END
$function$;
