-- AlterTable
ALTER TABLE "Approval" ADD COLUMN     "toolDefinition" JSONB,
ADD COLUMN     "toolDefinitionSha256" TEXT;
