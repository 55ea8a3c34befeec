-- CreateEnum
CREATE TYPE "ContinuityStrategy" AS ENUM ('restore', 'reference');

-- AlterTable
ALTER TABLE "ThreadConfig" ADD COLUMN     "ownership" JSONB;

-- CreateTable
CREATE TABLE "ThreadContinuity" (
    "workspaceId" TEXT NOT NULL,
    "taskId" TEXT NOT NULL,
    "agent" TEXT NOT NULL,
    "strategy" "ContinuityStrategy" NOT NULL,
    "toolCalls" JSONB,
    "conversationId" TEXT,
    "version" INTEGER NOT NULL,
    "sizeBytes" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ThreadContinuity_pkey" PRIMARY KEY ("taskId","agent")
);

-- CreateTable
CREATE TABLE "ThreadEntity" (
    "workspaceId" TEXT NOT NULL,
    "taskId" TEXT NOT NULL,
    "entityId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "type" TEXT,
    "data" JSONB,
    "firstSeenAt" TIMESTAMP(3) NOT NULL,
    "lastActiveAt" TIMESTAMP(3) NOT NULL,
    "clearedAt" TIMESTAMP(3),

    CONSTRAINT "ThreadEntity_pkey" PRIMARY KEY ("taskId","entityId")
);

-- AddForeignKey
ALTER TABLE "ThreadContinuity" ADD CONSTRAINT "ThreadContinuity_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ThreadContinuity" ADD CONSTRAINT "ThreadContinuity_taskId_fkey" FOREIGN KEY ("taskId") REFERENCES "Task"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ThreadEntity" ADD CONSTRAINT "ThreadEntity_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ThreadEntity" ADD CONSTRAINT "ThreadEntity_taskId_fkey" FOREIGN KEY ("taskId") REFERENCES "Task"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
