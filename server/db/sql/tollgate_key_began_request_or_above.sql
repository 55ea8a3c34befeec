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
--
-- Locks, in the order of server/services/locks.ts: none of its own.
CREATE OR REPLACE FUNCTION public.tollgate_key_began_request_or_above(p_own_key text, p_parent_id text, p_agent_key_id text)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
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
$function$;
