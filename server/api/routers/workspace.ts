// Workspaces: the ones the signed-in person belongs to, and new ones (admins).
// Moving a browser session between them is auth.switchWorkspace.
import { z } from "zod";
import { createWorkspace } from "../../services/workspaces/create-workspace.ts";
import { listMyWorkspaces } from "../../services/workspaces/list-workspaces.ts";
import { updateWorkspaceSettings, workspaceSettings } from "../../services/workspaces/workspace-settings.ts";
import { zName } from "../schemas.ts";
import { adminProcedure, operatorProcedure, router } from "../trpc.ts";

const zRole = z.enum(["ADMIN", "OPERATOR", "VIEWER"]);

const zSettings = z.strictObject({
  /** Tool and agent names may mix scripts (Latin with Cyrillic, say); off by default, as look-alike names mix them. */
  allowMixedScriptNames: z.boolean(),
  /**
   * Any agent key may name another key's request as its parentRequestId without
   * the delegation token of that request's key (request.delegate): the old
   * behaviour, for a transition; off for new workspaces.
   */
  allowUndelegatedChildren: z.boolean(),
});

export const workspaceRouter = router({
  list: operatorProcedure
    .output(z.object({ items: z.array(z.object({ id: z.string(), name: z.string(), role: zRole, current: z.boolean() })) }))
    .query(async ({ ctx }) => ({ items: await listMyWorkspaces(ctx.deps, ctx.operator) })),

  /** The workspace's security settings. */
  settings: operatorProcedure.output(zSettings).query(({ ctx }) => workspaceSettings(ctx.deps, ctx.operator.workspaceId)),

  /** Changes the settings given (admins); audited. */
  updateSettings: adminProcedure
    .input(zSettings.partial())
    .output(zSettings)
    .mutation(({ ctx, input }) => updateWorkspaceSettings(ctx.deps, ctx.operator, input)),

  /** A new, empty workspace whose first admin is the caller. */
  create: adminProcedure
    .input(z.object({ name: zName }))
    .output(z.object({ id: z.string(), name: z.string(), role: zRole }))
    .mutation(({ ctx, input }) => createWorkspace(ctx.deps, ctx.operator, input.name)),
});
