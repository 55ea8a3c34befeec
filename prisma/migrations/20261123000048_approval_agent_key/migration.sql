-- AlterTable
ALTER TABLE "Approval" ADD COLUMN     "agentKeyId" TEXT;
