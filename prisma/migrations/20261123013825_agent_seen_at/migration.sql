-- AlterTable
ALTER TABLE "Approval" ADD COLUMN     "agentSeenAt" TIMESTAMP(3);
