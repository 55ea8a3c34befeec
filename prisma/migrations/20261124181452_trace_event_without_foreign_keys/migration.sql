-- TraceEvent is append-only and the highest-volume table: every row is written
-- by a statement that reads its ids from the request row it belongs to, and
-- requests, tasks and workspaces are never deleted, so the three referential
-- checks per row (which doubled the cost of a 100-event batch) guard nothing.
-- The (requestId, id) index served only the request key's check; events are
-- read by task.

-- DropForeignKey
ALTER TABLE "TraceEvent" DROP CONSTRAINT "TraceEvent_requestId_fkey";

-- DropForeignKey
ALTER TABLE "TraceEvent" DROP CONSTRAINT "TraceEvent_taskId_fkey";

-- DropForeignKey
ALTER TABLE "TraceEvent" DROP CONSTRAINT "TraceEvent_workspaceId_fkey";

-- DropIndex
DROP INDEX "TraceEvent_requestId_id_idx";
