-- A set of requests and every request above them (their call chains), with
-- their tasks. Reads only: the callers lock.
--
-- Locks, in the order of server/services/locks.ts: none of its own.
CREATE OR REPLACE FUNCTION public.tollgate_call_chains(p_request_ids text[])
 RETURNS TABLE(request_id text, task_id text, resume_url text)
 LANGUAGE sql
 STABLE
AS $function$
  WITH RECURSIVE chain AS (
    SELECT r.id, r."parentRequestId", 1 AS depth FROM "Request" r WHERE r.id = ANY(p_request_ids)
    UNION
    SELECT up.id, up."parentRequestId", chain.depth + 1 FROM "Request" up JOIN chain ON up.id = chain."parentRequestId"
    WHERE chain.depth < 1000
  )
  SELECT r.id, r."taskId", r."resumeUrl" FROM "Request" r WHERE r.id IN (SELECT chain.id FROM chain)
$function$;
