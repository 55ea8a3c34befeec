-- AlterTable
ALTER TABLE "OperatorSession" ADD COLUMN     "name" TEXT;

-- AlterTable
ALTER TABLE "Workspace" ADD COLUMN     "maxTokenHours" INTEGER NOT NULL DEFAULT 720;
