-- DropIndex
DROP INDEX "Approval_status_escalateAt_idx";

-- DropIndex
DROP INDEX "Approval_status_expiresAt_idx";

-- DropIndex
DROP INDEX "Approval_status_remindAt_idx";

-- CreateIndex
CREATE INDEX "Approval_status_expiresAt_idx" ON "Approval"("status", "expiresAt") WHERE ("expiresAt" IS NOT NULL);

-- CreateIndex
CREATE INDEX "Approval_status_escalateAt_idx" ON "Approval"("status", "escalateAt") WHERE ("escalateAt" IS NOT NULL);

-- CreateIndex
CREATE INDEX "Approval_status_remindAt_idx" ON "Approval"("status", "remindAt") WHERE ("remindAt" IS NOT NULL);
