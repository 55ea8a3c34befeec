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
--
-- Locks, in the order of server/services/locks.ts: the audit chain head's
-- advisory lock (4).
CREATE OR REPLACE FUNCTION public.tollgate_audit_head_is(p_workspace_id text, p_seq integer, p_hash text)
 RETURNS boolean
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
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
$function$;
