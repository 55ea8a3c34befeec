-- AlterTable
ALTER TABLE "AgentStateVersion" ALTER COLUMN "state" SET DATA TYPE JSON;
