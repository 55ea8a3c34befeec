-- approval.request in two statements (three when a rule decides): this one
-- locks the request's call chain (lock order step 1) and then, in a snapshot
-- taken after the lock was granted, reads the request and everything the gate
-- depends on: the task's agent, the session's metadata, the thread's config
-- and the workspace's rules version, defaults and channels version. Whether
-- the key began the request or a request above it comes with it; the server
-- applies the authority rule (a key trusted by name acts on any request).
-- Returns nothing when the workspace has no such request.
--
-- Locks, in the order of server/services/locks.ts: requests (1) FOR NO KEY
-- UPDATE (via tollgate_lock_chains).
CREATE OR REPLACE FUNCTION public.tollgate_lock_request_for_approval(p_workspace_id text, p_request_id text, p_agent_key_id text)
 RETURNS SETOF tollgate_gate_fact_row
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
BEGIN
  PERFORM 1 FROM "Request" r WHERE r.id = p_request_id AND r."workspaceId" = p_workspace_id;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  PERFORM 1 FROM tollgate_lock_chains(ARRAY[p_request_id]);
  RETURN QUERY SELECT * FROM tollgate_gate_facts(p_workspace_id, p_request_id, p_agent_key_id);
END
$function$;
