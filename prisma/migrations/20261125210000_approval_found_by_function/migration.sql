-- An agent's read of an approval (findApproval in server/services/authority.ts:
-- approval.await, claimExecution, reportExecution), a function so that it is
-- planned once per connection rather than on every call: the approval, its
-- task's agent, and whether the key began its request or any request above
-- it (keyAtOrAbove in the same file, the same test). No row when the
-- workspace has no such approval.
CREATE FUNCTION tollgate_find_approval(p_workspace_id text, p_approval_id text, p_agent_key_id text)
RETURNS TABLE (approval "Approval", task_agent text, key_at_or_above boolean)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN QUERY
  SELECT a, t.agent, (COALESCE(r."agentKeyId" = p_agent_key_id, false) OR EXISTS (
    WITH RECURSIVE above AS (
      SELECT up.id, up."parentRequestId" AS parent, up."agentKeyId" FROM "Request" up WHERE up.id = r."parentRequestId"
      UNION
      SELECT up.id, up."parentRequestId", up."agentKeyId" FROM "Request" up JOIN above ON up.id = above.parent
    )
    SELECT 1 FROM above WHERE above."agentKeyId" = p_agent_key_id))
  FROM "Approval" a
  JOIN "Request" r ON r.id = a."requestId"
  JOIN "Task" t ON t.id = r."taskId"
  WHERE a.id = p_approval_id AND a."workspaceId" = p_workspace_id;
END
$$;
