// A workspace's security settings: read by anyone signed in, changed by
// admins, each change audited with what it was before.
import type { OperatorPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps } from "../deps.ts";

export interface WorkspaceSettings {
  /** Tool and agent names may mix scripts (refused by default: look-alike names mix them). */
  allowMixedScriptNames: boolean;
  /** Any agent key may begin work under another key's request without its delegation token (the behaviour before tokens). */
  allowUndelegatedChildren: boolean;
}

const SETTINGS = { allowMixedScriptNames: true, allowUndelegatedChildren: true } as const;

export async function workspaceSettings(deps: ServiceDeps, workspaceId: string): Promise<WorkspaceSettings> {
  return deps.prisma.workspace.findUniqueOrThrow({ where: { id: workspaceId }, select: SETTINGS });
}

export async function updateWorkspaceSettings(deps: ServiceDeps, admin: OperatorPrincipal, changes: Partial<WorkspaceSettings>): Promise<WorkspaceSettings> {
  const now = deps.now();
  return deps.prisma.$transaction(async (tx) => {
    const before = await tx.workspace.findUniqueOrThrow({ where: { id: admin.workspaceId }, select: SETTINGS });
    const after = await tx.workspace.update({ where: { id: admin.workspaceId }, data: changes, select: SETTINGS });
    await deps.audit.append(
      tx,
      admin.workspaceId,
      {
        actor: { type: "operator", id: admin.operatorId, label: admin.email },
        action: "workspace.settings_changed",
        subjectType: "workspace",
        subjectId: admin.workspaceId,
        data: { before, after },
      },
      now,
    );
    return after;
  });
}
