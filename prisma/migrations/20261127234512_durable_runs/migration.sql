-- AlterTable
ALTER TABLE "Request" ADD COLUMN     "runId" TEXT;

-- CreateTable
CREATE TABLE "DurableRun" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "agentKeyId" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "taskId" TEXT,
    "requestId" TEXT,
    "turn" INTEGER NOT NULL DEFAULT 0,
    "leaseHolder" TEXT,
    "leaseExpiresAt" TIMESTAMP(3),
    "state" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "DurableRun_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "DurableRun_requestId_idx" ON "DurableRun"("requestId");

-- CreateIndex
CREATE UNIQUE INDEX "DurableRun_agentKeyId_runId_key" ON "DurableRun"("agentKeyId", "runId");

-- A durable run's saved state and lease end with its request, whichever way it
-- ends (completed, failed, canceled with its task or chain): nothing an adapter
-- kept to continue outlives the run. Requests of no run skip it in the WHEN.
CREATE FUNCTION tollgate_durable_run_request_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "DurableRun" SET state = NULL, "leaseHolder" = NULL, "leaseExpiresAt" = NULL
  WHERE "requestId" = NEW.id;
  RETURN NULL;
END $$;

CREATE TRIGGER durable_run_request_ended
  AFTER UPDATE OF status ON "Request"
  FOR EACH ROW
  WHEN (NEW."runId" IS NOT NULL AND NEW.status IN ('COMPLETED', 'FAILED', 'CANCELED') AND OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION tollgate_durable_run_request_ended();
