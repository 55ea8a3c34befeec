-- Ends a pending approval, the caller holding tollgate_lock_approval_ending's
-- locks and the audit lock. p_ending holds the decision's columns as the
-- server wrote them (with the signed receipt); p_delivery the webhook delivery
-- to queue, if the request has an address; p_trace the trace event's data;
-- p_audit the audit entry, chained and MACed by the server on the head it read
-- behind the audit lock. Returns one 'approval' row when the approval ended,
-- then a 'request' row per request and a 'task' row per task whose status
-- changed; nothing at all when the approval was no longer pending.
--
-- Locks, in the order of server/services/locks.ts: tasks (3) FOR NO KEY UPDATE
-- (via tollgate_count_requests_in_tasks).
CREATE OR REPLACE FUNCTION public.tollgate_finish_approval(p_approval_id text, p_ending json, p_delivery json, p_trace json, p_audit json, p_now timestamp without time zone)
 RETURNS TABLE(kind text, id text, task_id text, session_id text, workspace_id text, status "RunStatus")
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
DECLARE
  ended "Approval";
BEGIN
  -- 1. Write-once (invariant 4): only a pending approval ends, so exactly one
  --    ending wins. Arguments stay json, in the order they were given.
  UPDATE "Approval" a SET
    status = (p_ending->>'status')::"ApprovalStatus",
    "decisionAction" = (p_ending->>'decisionAction')::"DecisionAction",
    "decisionMessage" = p_ending->>'decisionMessage',
    "approvedArgs" = CASE WHEN json_typeof(p_ending->'approvedArgs') = 'null' THEN NULL ELSE p_ending->'approvedArgs' END,
    "decidedBy" = p_ending->>'decidedBy',
    "decidedById" = p_ending->>'decidedById',
    "deciderKind" = (p_ending->>'deciderKind')::"DeciderKind",
    "decidedAt" = p_now,
    receipt = p_ending->>'receipt'
  WHERE a.id = p_approval_id AND a.status = 'PENDING'
  RETURNING a.* INTO ended;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  RETURN QUERY SELECT 'approval'::text, ended.id, ended."taskId", ended."sessionId", ended."workspaceId", NULL::"RunStatus";

  -- 2. One fewer pending approval along the chain; the requests it un-pauses,
  --    and their tasks' counts and statuses (lock order step 3).
  RETURN QUERY SELECT * FROM tollgate_adjust_pending_with_tasks(ARRAY[ended."requestId"], ARRAY[-1], p_now);

  -- 3. The decision's webhook delivery, queued with the decision so it cannot be lost.
  IF p_delivery IS NOT NULL THEN
    INSERT INTO "DecisionDelivery" (id, "workspaceId", "approvalId", url, "nextAttemptAt", "createdAt")
    VALUES (p_delivery->>'id', ended."workspaceId", ended.id, p_delivery->>'url', p_now, p_now);
  END IF;

  -- 4. The approval's step in its task's execution trace.
  INSERT INTO "TraceEvent" ("workspaceId", "sessionId", "taskId", "requestId", category, type, name, data, "createdAt")
  VALUES (ended."workspaceId", ended."sessionId", ended."taskId", ended."requestId", 'EXECUTION', 'approval.decided', ended.tool, p_trace, p_now);

  -- 5. The audit entry, as the server chained it.
  PERFORM tollgate_insert_audit_entry(p_audit);
END
$function$;
