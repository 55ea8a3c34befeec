-- AlterTable
ALTER TABLE "Approval" ADD COLUMN     "notRunReason" TEXT;
