-- Everything ending an approval writes, locked in the lock order
-- (server/services/locks.ts): 1. its request's call chain; 2. the approval;
-- 3. while it is pending, the tasks of that chain, whose statuses the ending
-- may change. Step 4, the workspace's audit lock, is taken in the same
-- statement by tollgate_lock_audit_head (server/services/approvals/
-- finish-approval.ts). Returns the approval as it is behind its lock, or
-- nothing when the workspace has no such approval.
--
-- Locks, in the order of server/services/locks.ts: requests (1) FOR NO KEY
-- UPDATE (via tollgate_lock_chains); then approvals (2) FOR NO KEY UPDATE; then
-- tasks (3) FOR NO KEY UPDATE.
CREATE OR REPLACE FUNCTION public.tollgate_lock_approval_ending(p_workspace_id text, p_approval_id text)
 RETURNS SETOF "Approval"
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
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
$function$;
