// What a process needs to resume a request that another process paused (and
// may have died since): the framework state stored at request.begin and every
// approval of the request with its decision, by the framework's own ids.
import { notFound } from "../../domain/errors.ts";
import type { AgentPrincipal } from "../../domain/principal.ts";
import type { RunStatus } from "../../domain/lifecycle.ts";
import { approvalResult, type ApprovalResult } from "../approvals/approval-views.ts";
import { mayActOnRequest } from "../authority.ts";
import type { ServiceDeps } from "../deps.ts";

export interface LoadedRequest {
  requestId: string;
  sessionId: string;
  taskId: string;
  agent: string;
  status: RunStatus;
  resumeToken: string | null;
  /** Oldest first; each with the tool, the framework's id (if one was given) and where it stands. */
  approvals: (ApprovalResult & { tool: string; externalId: string | null })[];
}

/** The request as the key that began it (or one above it) may see it; NOT_FOUND for anyone else. */
export async function loadRequest(deps: ServiceDeps, agent: AgentPrincipal, requestId: string): Promise<LoadedRequest> {
  if (!(await mayActOnRequest(deps.prisma, agent, requestId))) throw notFound("request", requestId);
  const request = await deps.prisma.request.findUniqueOrThrow({
    where: { id: requestId },
    include: { task: { select: { agent: true } }, approvals: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] } },
  });
  return {
    requestId: request.id,
    sessionId: request.sessionId,
    taskId: request.taskId,
    agent: request.task.agent,
    status: request.status,
    resumeToken: request.resumeToken,
    approvals: request.approvals.map((approval) => ({ ...approvalResult(approval), tool: approval.tool, externalId: approval.externalId })),
  };
}
