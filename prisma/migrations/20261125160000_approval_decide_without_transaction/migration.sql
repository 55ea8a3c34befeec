-- approval.decide in two statements and no transaction, as approval.request
-- runs: the server reads the approval and the workspace's audit head without a
-- lock, checks the decision, signs its receipt and chains its audit entry to
-- that head; then this function, a transaction of its own, takes the ending's
-- locks, finds behind them that the approval is still pending and the head is
-- still that entry, and writes. When either changed it writes nothing and
-- answers 'stale' (the approval ended or is gone) or 'contended' (another
-- entry took the head), and the server decides again in one transaction
-- behind the locks (server/services/approvals/decide-approval.ts). Returns
-- what tollgate_finish_approval returns otherwise.
-- Lock order step 4, the workspace's audit lock, and then whether its head is
-- still the entry a write read or remembered: the same seq (none for an empty
-- chain) and the same hash. The hash matters once a head is remembered for
-- longer than a call: a seq lost with commits a database gave up (a crash
-- without synchronous commit, a promoted replica, a restore) may be taken by
-- another entry, and a chain continued from the lost one would be broken for
-- good.
CREATE FUNCTION tollgate_audit_head_is(p_workspace_id text, p_seq integer, p_hash text)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  head record;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('audit:' || p_workspace_id));
  SELECT a.seq, a.hash INTO head FROM "AuditEntry" a WHERE a."workspaceId" = p_workspace_id ORDER BY a.seq DESC LIMIT 1;
  IF NOT FOUND THEN
    RETURN p_seq IS NULL;
  END IF;
  RETURN head.seq = p_seq AND head.hash = p_hash;
END
$$;

CREATE FUNCTION tollgate_finish_approval_if_unchanged(
  p_workspace_id text,
  p_approval_id text,
  p_audit_seq integer,
  p_ending json,
  p_delivery json,
  p_trace json,
  p_audit json,
  p_now timestamp(3)
) RETURNS TABLE (kind text, id text, task_id text, session_id text, workspace_id text, status "RunStatus")
LANGUAGE plpgsql AS $$
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
$$;
