-- approval.decide in one statement when nothing it was decided on changed:
-- locks the approval's call chain, the approval and the chain's tasks
-- (tollgate_lock_approval_ending), checks behind the locks that the approval
-- is still open and that the workspace's audit head is the one the server
-- read (tollgate_audit_head_is, which takes the audit lock), and ends the
-- approval with its decision, delivery, trace and audit entry
-- (tollgate_finish_approval). When something changed it writes nothing and
-- answers so, and the server reads again behind the locks.
--
-- Locks, in the order of server/services/locks.ts: requests (1) FOR NO KEY
-- UPDATE (via tollgate_lock_chains); then approvals (2) FOR NO KEY UPDATE (via
-- tollgate_lock_approval_ending); then tasks (3) FOR NO KEY UPDATE (via
-- tollgate_lock_approval_ending); then the audit chain head's advisory lock (4)
-- (via tollgate_audit_head_is).
CREATE OR REPLACE FUNCTION public.tollgate_finish_approval_if_unchanged(p_workspace_id text, p_approval_id text, p_audit_seq integer, p_ending json, p_delivery json, p_trace json, p_audit json, p_now timestamp without time zone)
 RETURNS TABLE(kind text, id text, task_id text, session_id text, workspace_id text, status "RunStatus")
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
DECLARE
  locked_status "ApprovalStatus";
BEGIN
  -- 1. Lock order steps 1 to 3: the request's call chain, the approval, and
  --    while it is pending the chain's tasks; the approval's status as it is
  --    behind its lock. Nothing else the decision was checked against changes
  --    while an approval is pending (who may decide, how, what was asked).
  SELECT a.status INTO locked_status FROM tollgate_lock_approval_ending(p_workspace_id, p_approval_id) a;
  IF NOT FOUND OR locked_status <> 'PENDING' THEN
    RETURN QUERY SELECT 'stale'::text, p_approval_id, NULL::text, NULL::text, NULL::text, NULL::"RunStatus";
    RETURN;
  END IF;

  -- 2. Lock order step 4: the workspace's audit lock, and its head still the
  --    entry the server chained the decision's entry to.
  IF NOT tollgate_audit_head_is(p_workspace_id, p_audit_seq, p_audit->>'prevHash') THEN
    RETURN QUERY SELECT 'contended'::text, p_approval_id, NULL::text, NULL::text, NULL::text, NULL::"RunStatus";
    RETURN;
  END IF;

  -- 3. The ending, with everything that changes with it.
  RETURN QUERY SELECT * FROM tollgate_finish_approval(p_approval_id, p_ending, p_delivery, p_trace, p_audit, p_now);
END
$function$;
