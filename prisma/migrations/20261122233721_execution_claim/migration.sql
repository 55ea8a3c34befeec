-- AlterTable
ALTER TABLE "Approval" ADD COLUMN     "executionClaimKey" TEXT,
ADD COLUMN     "executionClaimedAt" TIMESTAMP(3);
