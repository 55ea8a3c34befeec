-- Several decisions in one workspace written in one statement, for decisions
-- that queue in this node's turn at the workspace's audit chain
-- (server/services/approvals/decision-batches.ts). Each is what
-- tollgate_finish_approval_if_unchanged writes for one decision; together
-- they take one round trip and one commit, where one after another each
-- waited for the one before to come back.
--
-- p_endings is a json array, in the order the server chained the audit
-- entries: each element {approvalId, ending, delivery, trace, audit, now},
-- the arguments tollgate_finish_approval takes for one approval. The first
-- entry is chained to the head p_audit_seq names; each next one to the entry
-- before it.
--
-- All or nothing: when one approval is no longer pending, or the audit head
-- is no longer the one the server chained to, nothing is written and one row
-- answers 'stale' or 'contended' (ending NULL); the server then decides each
-- on its own. Otherwise the rows tollgate_finish_approval returns, each with
-- the index of the ending it belongs to.
--
-- Locks, in the order of server/services/locks.ts: requests (1) FOR NO KEY
-- UPDATE (via tollgate_lock_chains); then approvals (2) FOR NO KEY UPDATE; then
-- tasks (3) FOR NO KEY UPDATE; then the audit chain head's advisory lock (4)
-- (via tollgate_audit_head_is).
CREATE OR REPLACE FUNCTION public.tollgate_finish_approvals_if_unchanged(p_workspace_id text, p_audit_seq integer, p_endings json)
 RETURNS TABLE(ending integer, kind text, id text, task_id text, session_id text, workspace_id text, status "RunStatus")
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
DECLARE
  approval_ids text[];
  request_ids text[];
  chain_task_ids text[];
  pending_count integer;
  item json;
  i integer;
BEGIN
  SELECT array_agg(e->>'approvalId') INTO approval_ids FROM json_array_elements(p_endings) e;
  -- An approval never moves to another request, so the requests are read unlocked.
  SELECT array_agg(DISTINCT a."requestId") INTO request_ids FROM "Approval" a
  WHERE a.id = ANY(approval_ids) AND a."workspaceId" = p_workspace_id;

  -- 1. Lock order step 1: every ending's call chain, all in one statement in id order.
  SELECT array_agg(c.task_id) INTO chain_task_ids FROM tollgate_lock_chains(request_ids) c;

  -- 2. Step 2: the approvals, in id order, each still pending behind its lock.
  --    Nothing else a decision was checked against changes while an approval
  --    is pending. One gone or ended (or named twice), or none named, ends the
  --    batch unwritten.
  SELECT count(*) FILTER (WHERE locked.status = 'PENDING') INTO pending_count FROM (
    SELECT a.status FROM "Approval" a WHERE a.id = ANY(approval_ids) AND a."workspaceId" = p_workspace_id
    ORDER BY a.id FOR NO KEY UPDATE
  ) locked;
  IF coalesce(cardinality(approval_ids), 0) = 0 OR pending_count <> cardinality(approval_ids) THEN
    RETURN QUERY SELECT NULL::integer, 'stale'::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::"RunStatus";
    RETURN;
  END IF;

  -- 3. Step 3: the chains' tasks, in id order.
  PERFORM 1 FROM "Task" t WHERE t.id = ANY(chain_task_ids) ORDER BY t.id FOR NO KEY UPDATE;

  -- 4. Step 4: the workspace's audit lock, and its head still the entry the
  --    first ending's audit entry is chained to.
  IF NOT tollgate_audit_head_is(p_workspace_id, p_audit_seq, p_endings->0->'audit'->>'prevHash') THEN
    RETURN QUERY SELECT NULL::integer, 'contended'::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::"RunStatus";
    RETURN;
  END IF;

  -- 5. Each ending in the audit chain's order, with everything that changes
  --    with it (the array is parsed once: json is text, and each -> on it
  --    would parse it again).
  FOR item, i IN SELECT e.value, (e.ordinality - 1)::integer FROM json_array_elements(p_endings) WITH ORDINALITY e ORDER BY e.ordinality LOOP
    RETURN QUERY SELECT i, f.kind, f.id, f.task_id, f.session_id, f.workspace_id, f.status
      FROM tollgate_finish_approval(
        item->>'approvalId',
        item->'ending',
        CASE WHEN json_typeof(item->'delivery') = 'object' THEN item->'delivery' END,
        item->'trace',
        item->'audit',
        (item->>'now')::timestamp(3)
      ) f;
  END LOOP;
END
$function$;
