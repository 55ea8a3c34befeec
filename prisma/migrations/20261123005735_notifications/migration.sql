-- CreateEnum
CREATE TYPE "ChannelKind" AS ENUM ('EMAIL', 'SLACK', 'WEBHOOK');

-- CreateEnum
CREATE TYPE "NotificationReason" AS ENUM ('REQUESTED', 'ESCALATED', 'EXPIRING');

-- AlterTable
ALTER TABLE "Approval" ADD COLUMN     "askedGroup" TEXT,
ADD COLUMN     "askedOperators" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "askedRole" "OperatorRole",
ADD COLUMN     "escalateAt" TIMESTAMP(3),
ADD COLUMN     "escalationLevel" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "remindAt" TIMESTAMP(3),
ADD COLUMN     "route" JSONB;

-- AlterTable
ALTER TABLE "Operator" ADD COLUMN     "groups" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- AlterTable
ALTER TABLE "Policy" ADD COLUMN     "route" JSONB;

-- AlterTable
ALTER TABLE "Workspace" ADD COLUMN     "channelVersion" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "defaultRoute" JSONB;

-- CreateTable
CREATE TABLE "NotificationChannel" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "kind" "ChannelKind" NOT NULL,
    "emails" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "urlEncrypted" TEXT,
    "urlOrigin" TEXT,
    "secretEncrypted" TEXT,
    "digestThreshold" INTEGER NOT NULL DEFAULT 5,
    "digestWindowSeconds" INTEGER NOT NULL DEFAULT 60,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "createdBy" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "NotificationChannel_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Notification" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "approvalId" TEXT NOT NULL,
    "channelId" TEXT,
    "channelKey" TEXT NOT NULL,
    "kind" "ChannelKind" NOT NULL,
    "reason" "NotificationReason" NOT NULL,
    "level" INTEGER NOT NULL DEFAULT 0,
    "status" "DeliveryStatus" NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastError" TEXT,
    "recipients" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "messageId" TEXT,
    "digestSize" INTEGER,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deliveredAt" TIMESTAMP(3),

    CONSTRAINT "Notification_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "NotificationChannel_workspaceId_name_key" ON "NotificationChannel"("workspaceId", "name");

-- CreateIndex
CREATE INDEX "Notification_status_nextAttemptAt_idx" ON "Notification"("status", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "Notification_channelKey_deliveredAt_idx" ON "Notification"("channelKey", "deliveredAt");

-- CreateIndex
CREATE UNIQUE INDEX "Notification_approvalId_channelKey_reason_level_key" ON "Notification"("approvalId", "channelKey", "reason", "level");

-- CreateIndex
CREATE INDEX "Approval_status_escalateAt_idx" ON "Approval"("status", "escalateAt");

-- CreateIndex
CREATE INDEX "Approval_status_remindAt_idx" ON "Approval"("status", "remindAt");

-- AddForeignKey
ALTER TABLE "NotificationChannel" ADD CONSTRAINT "NotificationChannel_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Notification" ADD CONSTRAINT "Notification_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Notification" ADD CONSTRAINT "Notification_approvalId_fkey" FOREIGN KEY ("approvalId") REFERENCES "Approval"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Notification" ADD CONSTRAINT "Notification_channelId_fkey" FOREIGN KEY ("channelId") REFERENCES "NotificationChannel"("id") ON DELETE SET NULL ON UPDATE CASCADE;
