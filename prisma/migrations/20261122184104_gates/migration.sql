-- CreateEnum
CREATE TYPE "DeciderKind" AS ENUM ('operator', 'policy', 'timeout', 'system');

-- CreateEnum
CREATE TYPE "PolicyOutcome" AS ENUM ('approve', 'reject', 'require');

-- AlterEnum
ALTER TYPE "TimeoutOutcome" ADD VALUE 'cancel';

-- AlterTable
ALTER TABLE "AgentKey" ADD COLUMN     "trustedAgents" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- AlterTable
ALTER TABLE "Approval" ADD COLUMN     "deciderKind" "DeciderKind",
ADD COLUMN     "policyId" TEXT,
ADD COLUMN     "policyName" TEXT,
ADD COLUMN     "policyVersion" INTEGER,
ADD COLUMN     "receipt" TEXT,
ADD COLUMN     "requiredApprovals" INTEGER NOT NULL DEFAULT 1,
ADD COLUMN     "requiredRole" "OperatorRole" NOT NULL DEFAULT 'OPERATOR';

-- AlterTable
ALTER TABLE "Task" ADD COLUMN     "agentKeyId" TEXT;

-- AlterTable
ALTER TABLE "Workspace" ADD COLUMN     "defaultOnTimeout" "TimeoutOutcome" NOT NULL DEFAULT 'reject',
ADD COLUMN     "defaultTimeoutMs" INTEGER,
ADD COLUMN     "policyVersion" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "Policy" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "priority" INTEGER NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "version" INTEGER NOT NULL DEFAULT 1,
    "match" JSONB NOT NULL,
    "outcome" "PolicyOutcome" NOT NULL,
    "message" TEXT,
    "role" "OperatorRole" NOT NULL DEFAULT 'OPERATOR',
    "approvers" INTEGER NOT NULL DEFAULT 1,
    "allow" "DecisionAction"[],
    "timeoutMs" INTEGER,
    "onTimeout" "TimeoutOutcome" NOT NULL DEFAULT 'reject',
    "allowApproveOnTimeout" BOOLEAN NOT NULL DEFAULT false,
    "sourceApprovalId" TEXT,
    "expiresAt" TIMESTAMP(3),
    "createdById" TEXT,
    "createdBy" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Policy_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApprovalVote" (
    "approvalId" TEXT NOT NULL,
    "operatorId" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "decidedBy" TEXT NOT NULL,
    "action" "DecisionAction" NOT NULL,
    "message" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ApprovalVote_pkey" PRIMARY KEY ("approvalId","operatorId")
);

-- CreateTable
CREATE TABLE "SigningKey" (
    "kid" TEXT NOT NULL,
    "alg" TEXT NOT NULL,
    "publicJwk" JSONB NOT NULL,
    "privateKeyEncrypted" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retiredAt" TIMESTAMP(3),

    CONSTRAINT "SigningKey_pkey" PRIMARY KEY ("kid")
);

-- CreateIndex
CREATE INDEX "Policy_workspaceId_priority_idx" ON "Policy"("workspaceId", "priority");

-- CreateIndex
CREATE UNIQUE INDEX "Policy_workspaceId_name_key" ON "Policy"("workspaceId", "name");

-- AddForeignKey
ALTER TABLE "Policy" ADD CONSTRAINT "Policy_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApprovalVote" ADD CONSTRAINT "ApprovalVote_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApprovalVote" ADD CONSTRAINT "ApprovalVote_approvalId_fkey" FOREIGN KEY ("approvalId") REFERENCES "Approval"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
