-- AlterTable
ALTER TABLE "Approval" ADD COLUMN     "riskLabel" TEXT,
ADD COLUMN     "riskPaths" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "toolAnnotations" JSONB;

-- AlterTable
ALTER TABLE "Policy" ADD COLUMN     "riskLabel" TEXT,
ADD COLUMN     "riskPaths" TEXT[] DEFAULT ARRAY[]::TEXT[];
