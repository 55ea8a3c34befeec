// Sessions: agents open them; operators list them.
import { z } from "zod";
import { LIMITS } from "../../domain/json.ts";
import { listSessions, openSession } from "../../services/sessions.ts";
import { zId, zJsonObject } from "../schemas.ts";
import { agentProcedure, operatorProcedure, router } from "../trpc.ts";

const zTaskCounts = z.record(z.string(), z.number());

export const sessionRouter = router({
  open: agentProcedure
    .input(
      z.object({
        sessionId: zId("ses").optional(),
        title: z.string().max(LIMITS.nameChars).optional(),
        metadata: zJsonObject(LIMITS.metadataBytes).optional(),
      }),
    )
    .output(z.object({ sessionId: z.string() }))
    .mutation(({ ctx, input }) => openSession(ctx.deps, ctx.agent.workspaceId, input)),

  list: operatorProcedure
    .input(z.object({ limit: z.number().int().min(1).max(1000).default(200) }).default({ limit: 200 }))
    .output(
      z.object({
        items: z.array(
          z.object({
            id: z.string(),
            title: z.string().nullable(),
            status: z.enum(["OPEN", "CLOSED"]),
            createdAt: z.string(),
            taskCounts: zTaskCounts,
            pendingApprovals: z.number(),
          }),
        ),
      }),
    )
    .query(async ({ ctx, input }) => ({ items: await listSessions(ctx.deps, ctx.operator.workspaceId, input.limit) })),
});
