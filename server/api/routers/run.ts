// Durable runs: an agent names its run with its own id (runId) and continues
// it from any process, one process at a time.
import { z } from "zod";
import { LIMITS } from "../../domain/json.ts";
import { beginRun } from "../../services/runs/begin-run.ts";
import { holdRun } from "../../services/runs/run-state.ts";
import { zBeginFields } from "./request.ts";
import { agentProcedure, router } from "../trpc.ts";

const zRunId = z.string().min(1).max(200);
const zHolder = z.string().min(1).max(200);

export const runRouter = router({
  /**
   * Continues the run's request in progress, or begins its next one (the
   * first in `sessionId`, later ones in the run's task); the caller holds the
   * run's lease until it stops renewing it. CONFLICT while another live process drives it.
   */
  begin: agentProcedure
    .input(zBeginFields.extend({ runId: zRunId, holder: zHolder, replacing: zHolder.optional() }))
    .output(
      z.object({
        runId: z.string(),
        sessionId: z.string(),
        taskId: z.string(),
        requestId: z.string(),
        continued: z.boolean(),
        state: z.string().nullable(),
        leaseExpiresAt: z.string(),
      }),
    )
    .mutation(({ ctx, input }) => beginRun(ctx.deps, ctx.agent, { ...input, traceparent: ctx.traceparent })),

  /**
   * Renews the lease of the process driving the run; with `state`, keeps what
   * the adapter needs to continue (sealed; null forgets it). CONFLICT when
   * another process has taken the run over: this one must stop.
   */
  hold: agentProcedure
    .input(z.object({ runId: zRunId, holder: zHolder, state: z.string().min(1).max(LIMITS.resumeTokenChars).nullable().optional() }))
    .output(z.object({ runId: z.string(), leaseExpiresAt: z.string() }))
    .mutation(({ ctx, input }) => holdRun(ctx.deps, ctx.agent, input)),
});
