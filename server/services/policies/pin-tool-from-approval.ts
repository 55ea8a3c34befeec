// An admin pins an MCP tool from the review screen: the definition the call
// came with (as its server listed it then, kept on the approval), for the
// agent that asked, by the hash the admin was shown. What is pinned is what
// the reviewer saw, never what the server lists now.
import { DomainError, notFound } from "../../domain/errors.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import { toolDefinitionSha256, type ToolDefinition } from "../../domain/tool-pins.ts";
import type { ServiceDeps } from "../deps.ts";
import { pinTool, type ToolPinView } from "./tool-pins.ts";

export async function pinToolFromApproval(deps: ServiceDeps, operator: OperatorPrincipal, approvalId: string, shownSha256: string): Promise<ToolPinView> {
  const approval = await deps.prisma.approval.findFirst({
    where: { id: approvalId, workspaceId: operator.workspaceId },
    select: { tool: true, toolDefinition: true, toolDefinitionSha256: true, task: { select: { agent: true } } },
  });
  if (!approval) throw notFound("approval", approvalId);
  const stored = approval.toolDefinitionSha256;
  if (!approval.toolDefinition || !stored) {
    throw new DomainError(
      "PRECONDITION_FAILED",
      `approval ${approvalId} came without its tool's definition (calls through tollgate-mcp carry one), so there is nothing to pin from it; pin the tool as its server lists it with policy.pinTool`,
    );
  }
  if (shownSha256 !== stored) {
    throw new DomainError("CONFLICT", `the tool of approval ${approvalId} has the hash ${stored}, not ${shownSha256} as you were shown; nothing was pinned`);
  }
  const definition = approval.toolDefinition as unknown as ToolDefinition;
  // Read back from the database: pinned only if it still hashes to what the call was judged by.
  if (toolDefinitionSha256(definition) !== stored) {
    throw new DomainError("CONFLICT", `the tool definition kept on approval ${approvalId} no longer hashes to ${stored}; nothing was pinned`);
  }
  return pinTool(deps, operator, approval.task.agent, definition);
}
