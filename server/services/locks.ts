// Row locks taken at the start of a use case, so that what it read cannot
// change underneath it before commit (PostgreSQL runs READ COMMITTED).
import type { RunStatus } from "../domain/lifecycle.ts";
import type { Tx } from "./deps.ts";

/** Reads a request and locks its row until commit, so its status cannot change underneath. */
export async function lockRequest(tx: Tx, workspaceId: string, requestId: string) {
  const [row] = await tx.$queryRaw<{ id: string; sessionId: string; taskId: string; status: RunStatus; resumeUrl: string | null }[]>`
    SELECT id, "sessionId", "taskId", status, "resumeUrl" FROM "Request"
    WHERE id = ${requestId} AND "workspaceId" = ${workspaceId} FOR UPDATE`;
  return row ?? null;
}

