-- Lock order step 1: these requests' call chains, in id order, in one
-- statement. Returns the locked requests with their tasks and webhook address.
--
-- Locks, in the order of server/services/locks.ts: requests (1) FOR NO KEY
-- UPDATE.
CREATE OR REPLACE FUNCTION public.tollgate_lock_chains(p_request_ids text[])
 RETURNS TABLE(request_id text, task_id text, resume_url text)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
BEGIN
  RETURN QUERY
  SELECT r.id, r."taskId", r."resumeUrl" FROM "Request" r
  WHERE r.id IN (SELECT c.request_id FROM tollgate_call_chains(p_request_ids) c)
  ORDER BY r.id FOR NO KEY UPDATE OF r;
END
$function$;
