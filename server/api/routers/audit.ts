// The audit log for operators: filterable entries and the hash-chain verdict.
import { z } from "zod";
import { listAudit, verifyAuditChain } from "../../services/audit.ts";
import { operatorProcedure, router } from "../trpc.ts";

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
    .query(({ ctx }) => verifyAuditChain(ctx.deps, ctx.operator.workspaceId)),
});
