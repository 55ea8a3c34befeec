-- AlterTable
ALTER TABLE "Approval" ADD COLUMN     "executionDeviated" BOOLEAN;
