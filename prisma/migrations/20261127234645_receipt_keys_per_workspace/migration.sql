-- AlterTable
ALTER TABLE "SigningKey" ADD COLUMN     "workspaceId" TEXT;

-- CreateIndex
CREATE INDEX "SigningKey_workspaceId_retiredAt_idx" ON "SigningKey"("workspaceId", "retiredAt");

-- The one server-wide key signs no more: each workspace gets its own key at the
-- server's next start. Retired now, it stays published until the receipts it
-- signed have expired.
UPDATE "SigningKey" SET "retiredAt" = CURRENT_TIMESTAMP WHERE "retiredAt" IS NULL AND "workspaceId" IS NULL;
