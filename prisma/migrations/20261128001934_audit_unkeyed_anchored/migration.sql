-- AlterTable
ALTER TABLE "AuditEntry" ALTER COLUMN "macVersion" SET DEFAULT 1;

-- No entry in the unkeyed format is written any more: the server anchors the
-- chains that hold some, once, at the start that applies this migration
-- (services/audit-unkeyed-anchor.ts). NOT VALID: the entries of before stay.
ALTER TABLE "AuditEntry" ADD CONSTRAINT "AuditEntry_keyed_only" CHECK ("macVersion" = 1) NOT VALID;
