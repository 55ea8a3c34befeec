-- The approvals' openings and endings: as in 20261124150000_approval_functions
-- (and the migrations since that set their planning), which say what each
-- statement guarantees, with the chain and its tasks moved by the function
-- above.
--
-- Locks, in the order of server/services/locks.ts: tasks (3) FOR NO KEY UPDATE
-- (via tollgate_count_requests_in_tasks).
CREATE OR REPLACE FUNCTION public.tollgate_open_approval(p_approval json, p_traces json, p_notifications json, p_audit json, p_now timestamp without time zone)
 RETURNS TABLE(kind text, id text, task_id text, session_id text, workspace_id text, status "RunStatus")
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
DECLARE
  created "Approval";
BEGIN
  -- 1. The approval, as the server built it (json keeps the arguments' order).
  --    Arguments that are the JSON value null (LangGraph's interrupt(null)) stay
  --    that value, and so do a rule's approved ones: json_populate_record would
  --    read them as SQL NULL.
  created := json_populate_record(NULL::"Approval", p_approval);
  created."proposedArgs" := p_approval->'proposedArgs';
  IF created.status = 'APPROVED' THEN
    created."approvedArgs" := p_approval->'approvedArgs';
  END IF;
  INSERT INTO "Approval" SELECT (created).* RETURNING * INTO created;

  -- 2. A pending approval: one more along the chain, which pauses; then the tasks.
  IF created.status = 'PENDING' THEN
    RETURN QUERY SELECT * FROM tollgate_adjust_pending_with_tasks(ARRAY[created."requestId"], ARRAY[1], p_now);
  END IF;

  -- 3. The approval's steps in its task's execution trace, in order.
  INSERT INTO "TraceEvent" ("workspaceId", "sessionId", "taskId", "requestId", category, type, name, data, "createdAt")
  SELECT created."workspaceId", created."sessionId", created."taskId", created."requestId", 'EXECUTION', e->>'type', created.tool, e->'data', p_now
  FROM json_array_elements(p_traces) WITH ORDINALITY AS steps(e, n) ORDER BY n;

  -- 4. Its announcements, once per channel, reason and step.
  INSERT INTO "Notification" (id, "workspaceId", "approvalId", "channelId", "channelKey", kind, reason, level, "nextAttemptAt", "createdAt")
  SELECT n.id, created."workspaceId", created.id, n."channelId", n."channelKey", n.kind, n.reason, n.level, p_now, p_now
  FROM json_populate_recordset(NULL::"Notification", p_notifications) n
  ON CONFLICT DO NOTHING;

  -- 5. A rule's decision is audited like a person's.
  IF p_audit IS NOT NULL THEN
    PERFORM tollgate_insert_audit_entry(p_audit);
  END IF;
END
$function$;
