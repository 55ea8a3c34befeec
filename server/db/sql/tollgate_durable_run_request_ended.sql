-- A durable run's saved state and lease end with its request, whichever way it
-- ends (completed, failed, canceled with its task or chain): nothing an adapter
-- kept to continue outlives the run. Requests of no run skip it in the WHEN.
--
-- Locks: none of its own. It runs inside the statement that ends the request,
-- behind that use case's locks, and writes the run's own DurableRun row,
-- which no use case locks.
CREATE OR REPLACE FUNCTION public.tollgate_durable_run_request_ended()
 RETURNS trigger
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
BEGIN
  UPDATE "DurableRun" SET state = NULL, "leaseHolder" = NULL, "leaseExpiresAt" = NULL
  WHERE "requestId" = NEW.id;
  RETURN NULL;
END $function$;

CREATE TRIGGER durable_run_request_ended
  AFTER UPDATE OF status ON "Request"
  FOR EACH ROW
  WHEN (NEW."runId" IS NOT NULL AND NEW.status IN ('COMPLETED', 'FAILED', 'CANCELED') AND OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION tollgate_durable_run_request_ended();
