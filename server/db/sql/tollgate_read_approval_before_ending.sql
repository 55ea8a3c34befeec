-- approval.decide's first statement (readApprovalBeforeEnding in
-- server/services/approvals/finish-approval.ts), a function so that its
-- three joins are planned once per connection rather than on every call: the
-- approval, its task's agent, its request's webhook address and the
-- workspace's audit head, unlocked. No row when the workspace has no such
-- approval.
--
-- Locks, in the order of server/services/locks.ts: none of its own.
CREATE OR REPLACE FUNCTION public.tollgate_read_approval_before_ending(p_workspace_id text, p_approval_id text)
 RETURNS TABLE(approval "Approval", task_agent text, resume_url text, head_seq integer, head_hash text)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
BEGIN
  RETURN QUERY
  SELECT a, t.agent, r."resumeUrl", h.seq, h.hash
  FROM "Approval" a
  JOIN "Task" t ON t.id = a."taskId"
  JOIN "Request" r ON r.id = a."requestId"
  LEFT JOIN LATERAL (
    SELECT e.seq, e.hash FROM "AuditEntry" e WHERE e."workspaceId" = a."workspaceId" ORDER BY e.seq DESC LIMIT 1
  ) h ON true
  WHERE a.id = p_approval_id AND a."workspaceId" = p_workspace_id;
END
$function$;
