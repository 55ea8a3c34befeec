-- The authority rule for a task: whether the agent key began the task's
-- first request or one above it (p_own_key is the key that began it;
-- p_parent_id the request above, walked up the call chain), the same rule
-- as tollgate_key_began_request_or_above, in one place for both.
--
-- Locks, in the order of server/services/locks.ts: none of its own.
CREATE OR REPLACE FUNCTION public.tollgate_key_began_task_or_above(p_own_key text, p_parent_id text, p_agent_key_id text)
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
      SELECT up.id, up."parentTaskId" AS parent, up."agentKeyId" FROM "Task" up WHERE up.id = p_parent_id
      UNION
      SELECT up.id, up."parentTaskId", up."agentKeyId" FROM "Task" up JOIN above ON up.id = above.parent
    )
    SELECT 1 FROM above WHERE above."agentKeyId" = p_agent_key_id);
END
$function$;
