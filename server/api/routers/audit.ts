// The audit log for operators: filterable entries, the chain verdict, and sealing.
import { z } from "zod";
import { sealAuditLogs } from "../../services/audit-seal.ts";
import { listAudit, verifyAudit } from "../../services/audit.ts";
import { adminProcedure, operatorProcedure, router } from "../trpc.ts";

export const auditRouter = router({
  list: operatorProcedure
    .input(
      z
        .object({
          action: z.string().max(100).optional(),
          actor: z.string().max(320).optional(),
          subjectId: z.string().max(64).optional(),
          limit: z.number().int().min(1).max(1000).default(200),
          beforeSeq: z.number().int().positive().max(2_147_483_647).optional(),
        })
        .default({ limit: 200 }),
    )
    .query(({ ctx, input }) => listAudit(ctx.deps, ctx.operator.workspaceId, input)),

  verify: operatorProcedure
    .output(
      z.discriminatedUnion("ok", [
        z.object({ ok: z.literal(true), checked: z.number() }),
        z.object({ ok: z.literal(false), checked: z.number(), brokenAtSeq: z.number(), reason: z.string() }),
      ]),
    )
    .query(({ ctx }) => verifyAudit(ctx.deps, ctx.operator.workspaceId)),

  /** Seals the chain head now (it is also sealed periodically); nothing is written without a digest sink. */
  seal: adminProcedure
    .output(z.object({ sealed: z.array(z.object({ workspaceId: z.string(), seq: z.number(), hash: z.string(), sealedAt: z.string(), jws: z.string() })) }))
    .mutation(async ({ ctx }) => ({ sealed: await sealAuditLogs(ctx.deps, ctx.deps.auditDigests, ctx.operator.workspaceId) })),
});
