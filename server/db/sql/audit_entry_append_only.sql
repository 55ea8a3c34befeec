-- Audit entries are append-only: an UPDATE or DELETE fails whoever sends it.
-- (An owner can still drop the trigger; the keyed chain and the sealed digests
-- outside the database detect what is done then.)
--
-- Locks, in the order of server/services/locks.ts: none of its own.
CREATE OR REPLACE FUNCTION public.audit_entry_append_only()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  RAISE EXCEPTION 'audit entries are append-only: % on "AuditEntry" is refused', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END;
$function$;

CREATE TRIGGER audit_entry_append_only BEFORE DELETE OR UPDATE ON public."AuditEntry" FOR EACH ROW EXECUTE FUNCTION audit_entry_append_only();
