-- The first statement of an ending behind the locks (lockApprovalEnding in
-- server/services/approvals/finish-approval.ts), a function so that it is
-- planned once per connection rather than on every call, and answers in the
-- shape of tollgate_read_approval_before_ending (migration 20261125190000):
-- every lock an ending needs, in the lock order (server/services/locks.ts):
-- the request's call chain, the approval and, while it is pending, the
-- chain's tasks (tollgate_lock_approval_ending), then, while it is pending,
-- the workspace's audit lock with the head behind it (head_locked). No row
-- when the workspace has no such approval.
--
-- Locks, in the order of server/services/locks.ts: requests (1) FOR NO KEY
-- UPDATE (via tollgate_lock_chains); then approvals (2) FOR NO KEY UPDATE (via
-- tollgate_lock_approval_ending); then tasks (3) FOR NO KEY UPDATE (via
-- tollgate_lock_approval_ending); then the audit chain head's advisory lock (4)
-- (via tollgate_lock_audit_head).
CREATE OR REPLACE FUNCTION public.tollgate_lock_approval_ending_with_head(p_workspace_id text, p_approval_id text)
 RETURNS TABLE(approval "Approval", task_agent text, resume_url text, head_seq integer, head_hash text, head_locked boolean)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
BEGIN
  SELECT * INTO approval FROM tollgate_lock_approval_ending(p_workspace_id, p_approval_id);
  IF NOT FOUND THEN
    RETURN;
  END IF;
  head_locked := approval.status = 'PENDING';
  IF head_locked THEN
    SELECT h.seq, h.hash INTO head_seq, head_hash FROM tollgate_lock_audit_head(p_workspace_id) h;
  END IF;
  -- A task's agent and a request's webhook address never change.
  SELECT t.agent INTO task_agent FROM "Task" t WHERE t.id = approval."taskId";
  SELECT r."resumeUrl" INTO resume_url FROM "Request" r WHERE r.id = approval."requestId";
  RETURN NEXT;
END
$function$;
