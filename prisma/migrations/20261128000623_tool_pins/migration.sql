-- CreateTable
CREATE TABLE "ToolPin" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "agent" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "definition" JSONB NOT NULL,
    "pinnedBy" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ToolPin_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "ToolPin_workspaceId_agent_tool_sha256_key" ON "ToolPin"("workspaceId", "agent", "tool", "sha256");

-- AddForeignKey
ALTER TABLE "ToolPin" ADD CONSTRAINT "ToolPin_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
