-- AlterTable
ALTER TABLE "AuditEntry" ADD COLUMN     "macVersion" INTEGER NOT NULL DEFAULT 0;

-- Audit entries are append-only: an UPDATE or DELETE fails whoever sends it.
-- (An owner can still drop the trigger; the keyed chain and the sealed digests
-- outside the database detect what is done then.)
CREATE FUNCTION "audit_entry_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit entries are append-only: % on "AuditEntry" is refused', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER "audit_entry_append_only"
  BEFORE UPDATE OR DELETE ON "AuditEntry"
  FOR EACH ROW EXECUTE FUNCTION "audit_entry_append_only"();
