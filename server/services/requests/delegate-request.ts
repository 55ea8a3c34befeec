// request.delegate: the key that may act on a running request lets the agent
// it calls begin work under it with another key. The token names the request,
// its workspace and an expiry; it is signed, never stored, and checked by
// request.begin and run.begin wherever they run.
import { DomainError, notFound } from "../../domain/errors.ts";
import { DELEGATION_TTL, mintDelegation } from "../../domain/delegation.ts";
import { isActive } from "../../domain/lifecycle.ts";
import type { AgentPrincipal } from "../../domain/principal.ts";
import { findRequest } from "../authority.ts";
import type { ServiceDeps } from "../deps.ts";

export interface Delegation {
  /** Passed on with the token: the callee names it as its parentRequestId. */
  parentRequestId: string;
  delegation: string;
  expiresAt: string;
}

export async function delegateRequest(deps: ServiceDeps, agent: AgentPrincipal, requestId: string, ttlSeconds = DELEGATION_TTL.defaultSeconds): Promise<Delegation> {
  const request = await findRequest(deps.prisma, agent.workspaceId, requestId, agent);
  if (!request) throw notFound("request", requestId);
  if (!isActive(request.status)) {
    throw new DomainError("PRECONDITION_FAILED", `request ${requestId} already ended as ${request.status}; only a running request can invoke another`);
  }
  // Whole seconds, as the token carries it.
  const expiresAt = new Date(Math.floor(deps.now().getTime() / 1000 + ttlSeconds) * 1000);
  const delegation = mintDelegation(deps.delegationKey, { workspaceId: agent.workspaceId, requestId, expiresAt });
  return { parentRequestId: requestId, delegation, expiresAt: expiresAt.toISOString() };
}
