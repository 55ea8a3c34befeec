// Workspace administration for admins: operators and agent keys.
import { z } from "zod";
import { createAgentKey, createOperator, listOperators, revokeAgentKey } from "../../services/operators.ts";
import { zId, zName } from "../schemas.ts";
import { adminProcedure, operatorProcedure, router } from "../trpc.ts";

export const operatorRouter = router({
  list: operatorProcedure.query(async ({ ctx }) => ({ items: await listOperators(ctx.deps, ctx.operator.workspaceId) })),

  create: adminProcedure
    .input(
      z.object({
        email: z.email().max(320),
        name: zName,
        role: z.enum(["ADMIN", "OPERATOR", "VIEWER"]),
        password: z.string().min(8, "must be at least 8 characters").max(1024),
      }),
    )
    .mutation(({ ctx, input }) => createOperator(ctx.deps, ctx.operator, input)),
});

export const agentKeyRouter = router({
  create: adminProcedure.input(z.object({ name: zName })).mutation(({ ctx, input }) => createAgentKey(ctx.deps, ctx.operator, input.name)),
  revoke: adminProcedure.input(z.object({ keyId: zId("key") })).mutation(({ ctx, input }) => revokeAgentKey(ctx.deps, ctx.operator, input.keyId)),
});
