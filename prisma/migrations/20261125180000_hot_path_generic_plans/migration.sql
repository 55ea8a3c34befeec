-- The engine's functions run on cached, generic plans.
--
-- PL/pgSQL keeps each statement's plan per connection, but with parameters
-- PostgreSQL replans it for every call (a custom plan) for as long as the
-- generic plan's estimate looks costlier. An array parameter (a call chain's
-- request ids) is estimated at ten elements in the generic plan and at its
-- real length, one, in a custom one, so the call-chain statements were
-- replanned on every call: about 0.2 ms each for tollgate_lock_chains,
-- tollgate_adjust_pending and tollgate_refresh_task_statuses, which is half of
-- what approval.request's and approval.decide's writes cost inside PostgreSQL.
-- Every statement here looks rows up by key, which a generic plan does as
-- well as a custom one.
--
-- A function created or replaced later must say SET plan_cache_mode =
-- force_generic_plan itself (CREATE OR REPLACE drops the setting);
-- test/one-round-trip.test.ts checks that every one does.

-- An audit entry as the server wrote it. PL/pgSQL rather than SQL, so that its
-- INSERT is planned once per connection: PostgreSQL plans a SQL function's
-- statement on every call.
CREATE OR REPLACE FUNCTION tollgate_insert_audit_entry(p_audit json) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "AuditEntry" ("workspaceId", seq, "actorType", "actorId", "actorLabel", action, "subjectType", "subjectId", data, "prevHash", hash, "macVersion", "createdAt")
  SELECT e."workspaceId", e.seq, e."actorType", e."actorId", e."actorLabel", e.action, e."subjectType", e."subjectId", e.data, e."prevHash", e.hash, e."macVersion", e."createdAt"
  FROM json_populate_record(NULL::"AuditEntry", p_audit) e;
END
$$;

DO $$
DECLARE
  engine_function regprocedure;
BEGIN
  FOR engine_function IN
    SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
    WHERE p.proname LIKE 'tollgate\_%' AND l.lanname = 'plpgsql'
  LOOP
    EXECUTE format('ALTER FUNCTION %s SET plan_cache_mode = force_generic_plan', engine_function);
  END LOOP;
END
$$;
