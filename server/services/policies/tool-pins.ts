// Admins pin MCP tools they have vetted (an agent's tool, by the hash of its
// definition) and unpin them; everyone may list the pins. A rule with
// `pinned: true` matches a call only while the definition it comes with is
// pinned. Each change is audited.
import { isUniqueViolation, transact } from "../transaction.ts";
import { notFound } from "../../domain/errors.ts";
import { newId } from "../../domain/ids.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import { toolDefinitionSha256, type ToolDefinition } from "../../domain/tool-pins.ts";
import type { ToolAnnotations } from "../../domain/risk.ts";
import type { ServiceDeps, Tx } from "../deps.ts";
import { operatorActor } from "./create-policy.ts";

export interface ToolPinView {
  pinId: string;
  agent: string;
  tool: string;
  sha256: string;
  definition: ToolDefinition;
  pinnedBy: string;
  createdAt: string;
}

const view = (pin: { id: string; agent: string; tool: string; sha256: string; definition: unknown; pinnedBy: string; createdAt: Date }): ToolPinView => ({
  pinId: pin.id,
  agent: pin.agent,
  tool: pin.tool,
  sha256: pin.sha256,
  definition: pin.definition as ToolDefinition,
  pinnedBy: pin.pinnedBy,
  createdAt: pin.createdAt.toISOString(),
});

/**
 * The call's MCP facts for the rules: its annotations, and whether the tool
 * definition it came with is pinned for its agent. A pinned call is judged
 * by the pinned definition's annotations, whatever else the call says.
 */
export async function pinFacts(
  db: Tx | ServiceDeps["prisma"],
  workspaceId: string,
  agent: string,
  tool: string,
  given: { annotations?: ToolAnnotations | null; toolDefinition?: ToolDefinition | null },
): Promise<{ annotations: ToolAnnotations | null; pinned: boolean }> {
  const definition = given.toolDefinition;
  if (!definition || definition.name !== tool) return { annotations: given.annotations ?? null, pinned: false };
  const pin = await db.toolPin.findUnique({
    where: { workspaceId_agent_tool_sha256: { workspaceId, agent, tool, sha256: toolDefinitionSha256(definition) } },
    select: { id: true },
  });
  return pin ? { annotations: definition.annotations ?? null, pinned: true } : { annotations: given.annotations ?? null, pinned: false };
}

/** Pins the definition for the agent (the MCP server's name); pinning the same definition again returns its pin. */
export async function pinTool(deps: ServiceDeps, operator: OperatorPrincipal, agent: string, definition: ToolDefinition): Promise<ToolPinView> {
  const { workspaceId } = operator;
  const sha256 = toolDefinitionSha256(definition);
  const where = { workspaceId_agent_tool_sha256: { workspaceId, agent, tool: definition.name, sha256 } };
  const existing = await deps.prisma.toolPin.findUnique({ where });
  if (existing) return view(existing);
  const now = deps.now();
  try {
    return await transact(deps, async (tx) => {
      const pin = await tx.toolPin.create({
        data: { id: newId("pin"), workspaceId, agent, tool: definition.name, sha256, definition: definition as object, pinnedBy: operator.email, createdAt: now },
      });
      await deps.audit.append(tx, workspaceId, { actor: operatorActor(operator), action: "tool.pinned", subjectType: "tool", subjectId: pin.id, data: view(pin) }, now);
      return view(pin);
    });
  } catch (error) {
    // Pinned at the same moment by someone else: the same pin.
    if (!isUniqueViolation(error)) throw error;
    return view((await deps.prisma.toolPin.findUnique({ where }))!);
  }
}

export async function listToolPins(deps: ServiceDeps, workspaceId: string): Promise<ToolPinView[]> {
  const pins = await deps.prisma.toolPin.findMany({ where: { workspaceId }, orderBy: [{ agent: "asc" }, { tool: "asc" }, { createdAt: "asc" }] });
  return pins.map(view);
}

export async function unpinTool(deps: ServiceDeps, operator: OperatorPrincipal, pinId: string): Promise<{ pinId: string; deleted: true }> {
  const now = deps.now();
  return transact(deps, async (tx) => {
    const pin = await tx.toolPin.findFirst({ where: { id: pinId, workspaceId: operator.workspaceId } });
    if (!pin) throw notFound("pin", pinId);
    const { count } = await tx.toolPin.deleteMany({ where: { id: pinId, workspaceId: operator.workspaceId } });
    if (count === 0) throw notFound("pin", pinId);
    await deps.audit.append(tx, operator.workspaceId, { actor: operatorActor(operator), action: "tool.unpinned", subjectType: "tool", subjectId: pinId, data: view(pin) }, now);
    return { pinId, deleted: true as const };
  });
}
