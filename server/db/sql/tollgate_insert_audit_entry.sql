-- An audit entry as the server wrote it. PL/pgSQL rather than SQL, so that its
-- INSERT is planned once per connection: PostgreSQL plans a SQL function's
-- statement on every call.
--
-- Locks, in the order of server/services/locks.ts: none of its own.
CREATE OR REPLACE FUNCTION public.tollgate_insert_audit_entry(p_audit json)
 RETURNS void
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
AS $function$
BEGIN
  INSERT INTO "AuditEntry" ("workspaceId", seq, "actorType", "actorId", "actorLabel", action, "subjectType", "subjectId", data, "prevHash", hash, "macVersion", "createdAt")
  SELECT e."workspaceId", e.seq, e."actorType", e."actorId", e."actorLabel", e.action, e."subjectType", e."subjectId", e.data, e."prevHash", e.hash, e."macVersion", e."createdAt"
  FROM json_populate_record(NULL::"AuditEntry", p_audit) e;
END
$function$;
