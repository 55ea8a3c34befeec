// Workspaces: the ones the signed-in person belongs to, and new ones (admins).
// Moving a browser session between them is auth.switchWorkspace.
import { z } from "zod";
import { createWorkspace } from "../../services/workspaces/create-workspace.ts";
import { listMyWorkspaces } from "../../services/workspaces/list-workspaces.ts";
import { zName } from "../schemas.ts";
import { adminProcedure, operatorProcedure, router } from "../trpc.ts";

const zRole = z.enum(["ADMIN", "OPERATOR", "VIEWER"]);

export const workspaceRouter = router({
  list: operatorProcedure
    .output(z.object({ items: z.array(z.object({ id: z.string(), name: z.string(), role: zRole, current: z.boolean() })) }))
    .query(async ({ ctx }) => ({ items: await listMyWorkspaces(ctx.deps, ctx.operator) })),

  /** A new, empty workspace whose first admin is the caller. */
  create: adminProcedure
    .input(z.object({ name: zName }))
    .output(z.object({ id: z.string(), name: z.string(), role: zRole }))
    .mutation(({ ctx, input }) => createWorkspace(ctx.deps, ctx.operator, input.name)),
});
