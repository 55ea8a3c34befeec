// Tool and agent names whose letters mix scripts are refused unless the
// workspace allows them. The setting is read only for such a name, so the
// names agents send every call cost nothing here.
import { mixedScriptsError, mixedScriptsIn } from "../../domain/names.ts";
import type { ServiceDeps } from "../deps.ts";

export async function refuseMixedScripts(deps: ServiceDeps, workspaceId: string, field: string, name: string): Promise<void> {
  const mixed = mixedScriptsIn(name);
  if (!mixed) return;
  const workspace = await deps.prisma.workspace.findUnique({ where: { id: workspaceId }, select: { allowMixedScriptNames: true } });
  if (!workspace?.allowMixedScriptNames) throw mixedScriptsError(field, name, mixed);
}
