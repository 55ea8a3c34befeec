// Tasks: the session's tree, a task's timeline, and cancellation.
import { z } from "zod";
import { LIMITS } from "../../domain/json.ts";
import { cancelTask } from "../../services/requests.ts";
import { taskTimeline, taskTree } from "../../services/tasks.ts";
import { zRunStatus } from "../outputs.ts";
import { zId } from "../schemas.ts";
import { agentProcedure, deciderProcedure, operatorProcedure, router } from "../trpc.ts";

const zCancelInput = z.object({ taskId: zId("tsk"), reason: z.string().max(LIMITS.messageChars).optional() });
const zCancelResult = z.object({ taskId: z.string(), status: zRunStatus, canceledRequests: z.number() });

export const taskRouter = router({
  tree: operatorProcedure
    .input(z.object({ sessionId: zId("ses") }))
    .query(({ ctx, input }) => taskTree(ctx.deps, ctx.operator.workspaceId, input.sessionId)),

  timeline: operatorProcedure
    .input(z.object({ taskId: zId("tsk"), limit: z.number().int().min(1).max(5000).default(1000), afterId: z.string().regex(/^\d{1,18}$/, "must be an event id").optional() }))
    .query(({ ctx, input }) => taskTimeline(ctx.deps, ctx.operator.workspaceId, input.taskId, input.limit, input.afterId)),

  /** An operator cancels a task and everything below it. */
  cancel: deciderProcedure
    .input(zCancelInput)
    .output(zCancelResult)
    .mutation(({ ctx, input }) => cancelTask(ctx.deps, ctx.operator, input.taskId, input.reason)),

  /** An agent or orchestrator cancels its own work (or work it was delegated or trusted with). */
  cancelAsAgent: agentProcedure
    .input(zCancelInput)
    .output(zCancelResult)
    .mutation(({ ctx, input }) => cancelTask(ctx.deps, ctx.agent, input.taskId, input.reason)),
});
