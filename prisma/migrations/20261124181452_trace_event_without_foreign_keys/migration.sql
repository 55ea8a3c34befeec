-- TraceEvent is append-only and the highest-volume table: only the engine
-- writes it, with the ids of a request it has read, locked or written in the
-- same transaction, and requests, tasks and workspaces are never deleted, so
-- the three referential checks per row (which doubled the cost of a 100-event
-- batch) guard nothing. The (requestId, id) index served only a delete or an
-- id change of a request, which never happens; events are read by task.

-- DropForeignKey
ALTER TABLE "TraceEvent" DROP CONSTRAINT "TraceEvent_requestId_fkey";

-- DropForeignKey
ALTER TABLE "TraceEvent" DROP CONSTRAINT "TraceEvent_taskId_fkey";

-- DropForeignKey
ALTER TABLE "TraceEvent" DROP CONSTRAINT "TraceEvent_workspaceId_fkey";

-- DropIndex
DROP INDEX "TraceEvent_requestId_id_idx";
