-- approval.request's write checks the audit head by its hash as well as its
-- seq (tollgate_audit_head_is, migration 20261125160000): a rule's decision
-- may now be chained to the entry the node last wrote, remembered for longer
-- than a call (server/services/approvals/written-audit-heads.ts). Otherwise
-- as in migration 20261125120000.
--
-- Locks, in the order of server/services/locks.ts: requests (1) FOR NO KEY
-- UPDATE (via tollgate_lock_chains); then the audit chain head's advisory lock
-- (4) (via tollgate_audit_head_is); then tasks (3) FOR NO KEY UPDATE (via
-- tollgate_count_requests_in_tasks). Never both 4 and 3, which would invert
-- the order: the audit lock only for a rule's decision (p_audit), the tasks
-- only for a pending approval, and a rule's decision is never pending (the
-- server refuses to send both: assertLockOrder in request-approval.ts).
CREATE OR REPLACE FUNCTION public.tollgate_open_approval_if_unchanged(p_workspace_id text, p_agent_key_id text, p_fingerprint text, p_audit_seq integer, p_approval json, p_traces json, p_notifications json, p_audit json, p_now timestamp without time zone)
 RETURNS TABLE(kind text, id text, task_id text, session_id text, workspace_id text, status "RunStatus")
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
DECLARE
  the_request_id text := p_approval->>'requestId';
  facts record;
BEGIN
  -- 1. Lock order step 1: the request's call chain (another workspace's request is not locked).
  PERFORM 1 FROM "Request" r WHERE r.id = the_request_id AND r."workspaceId" = p_workspace_id;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'stale'::text, the_request_id, NULL::text, NULL::text, NULL::text, NULL::"RunStatus";
    RETURN;
  END IF;
  PERFORM 1 FROM tollgate_lock_chains(ARRAY[the_request_id]);

  -- 2. Behind the lock: the request still runs, and the gate's facts are the ones read.
  SELECT f.status, f.fingerprint INTO facts FROM tollgate_gate_facts(p_workspace_id, the_request_id, p_agent_key_id) f;
  IF NOT FOUND OR facts.status NOT IN ('RUNNING', 'PAUSED') OR facts.fingerprint IS DISTINCT FROM p_fingerprint THEN
    RETURN QUERY SELECT 'stale'::text, the_request_id, NULL::text, NULL::text, NULL::text, NULL::"RunStatus";
    RETURN;
  END IF;

  -- 3. A rule's decision: lock order step 4, the workspace's audit lock, and
  -- its head still the entry the server chained the decision to.
  IF p_audit IS NOT NULL AND NOT tollgate_audit_head_is(p_workspace_id, p_audit_seq, p_audit->>'prevHash') THEN
    RETURN QUERY SELECT 'contended'::text, the_request_id, NULL::text, NULL::text, NULL::text, NULL::"RunStatus";
    RETURN;
  END IF;

  -- 4. The approval with its trace, announcements and audit entry; a pending one pauses its chain.
  RETURN QUERY SELECT * FROM tollgate_open_approval(p_approval, p_traces, p_notifications, p_audit, p_now);
END
$function$;
