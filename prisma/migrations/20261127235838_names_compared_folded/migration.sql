-- AlterTable
ALTER TABLE "Policy" ADD COLUMN     "matchRewrittenFrom" JSONB;

-- AlterTable
ALTER TABLE "Workspace" ADD COLUMN     "allowMixedScriptNames" BOOLEAN NOT NULL DEFAULT false;
