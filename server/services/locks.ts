// Row locks taken at the start of a use case, so that what it read cannot
// change underneath it before commit (PostgreSQL runs READ COMMITTED).
import type { AgentPrincipal } from "../domain/principal.ts";
import { findRequest } from "./authority.ts";
import type { Tx } from "./deps.ts";

/**
 * Reads a request and locks its row until commit, so its status cannot change
 * underneath. Null when it does not exist or `agent` may not act on it (see
 * server/domain/authority.ts); a null agent is only for naming a parent request.
 */
export function lockRequest(tx: Tx, workspaceId: string, requestId: string, agent: AgentPrincipal | null) {
  return findRequest(tx, workspaceId, requestId, agent, { lock: true });
}
