-- The pending-approval counts along call chains (ARCHITECTURE.md, invariant
-- 1): each delta is added to its request and every request above it, summed
-- where chains meet so each row is updated once, and each active request's
-- status follows its count (PAUSED while above zero). The caller holds the
-- chains' locks, so the row joined as `old` is the row being updated and its
-- status the one before this change. Returns the requests whose status changed.
--
-- Locks, in the order of server/services/locks.ts: none of its own.
CREATE OR REPLACE FUNCTION public.tollgate_adjust_pending(p_request_ids text[], p_deltas integer[], p_now timestamp without time zone)
 RETURNS TABLE(request_id text, task_id text, session_id text, workspace_id text, status "RunStatus")
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
BEGIN
  RETURN QUERY
  WITH RECURSIVE seed AS (
    SELECT * FROM unnest(p_request_ids, p_deltas) AS s(id, delta)
  ), chain AS (
    SELECT r.id, r."parentRequestId", seed.delta, 1 AS depth FROM "Request" r JOIN seed ON r.id = seed.id
    UNION ALL
    SELECT r.id, r."parentRequestId", chain.delta, chain.depth + 1
    FROM "Request" r JOIN chain ON r.id = chain."parentRequestId"
    WHERE chain.depth < 1000
  ), totals AS (
    SELECT chain.id, SUM(chain.delta)::int AS delta FROM chain GROUP BY chain.id
  ), updated AS (
    UPDATE "Request" r
    SET "pendingApprovals" = GREATEST(r."pendingApprovals" + totals.delta, 0),
        status = CASE
          WHEN r.status IN ('RUNNING', 'PAUSED') AND r."pendingApprovals" + totals.delta > 0 THEN 'PAUSED'::"RunStatus"
          WHEN r.status IN ('RUNNING', 'PAUSED') THEN 'RUNNING'::"RunStatus"
          ELSE r.status
        END,
        "updatedAt" = p_now
    FROM totals JOIN "Request" old ON old.id = totals.id
    WHERE r.id = totals.id
    RETURNING r.id, r."taskId", r."sessionId", r."workspaceId", r.status AS new_status, old.status AS old_status
  )
  SELECT u.id, u."taskId", u."sessionId", u."workspaceId", u.new_status FROM updated u
  WHERE u.new_status <> u.old_status ORDER BY u.id;
END
$function$;
