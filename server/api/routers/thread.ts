// A task's thread beyond its state: configuration and ownership rules, each
// agent's continuity (restore or reference), and context assembly.
import { z } from "zod";
import { LIMITS } from "../../domain/json.ts";
import { assembleThreadContext, touchEntities } from "../../services/thread-context.ts";
import { loadContinuity, recordContinuity } from "../../services/thread-continuity.ts";
import { configureThread, getThread } from "../../services/thread-state.ts";
import { zId, zJson, zName } from "../schemas.ts";
import { agentProcedure, operatorProcedure, router } from "../trpc.ts";

const zJsonRecord = z.record(z.string(), z.unknown());

export const threadRouter = router({
  /**
   * Replaces the thread's config. `ownership` declares who owns which state
   * keys: left out, the thread keeps its rules; null clears them.
   */
  configure: agentProcedure
    .input(z.object({ taskId: zId("tsk"), config: zJsonRecord, ownership: z.unknown().optional() }))
    .output(z.object({ taskId: z.string() }))
    .mutation(({ ctx, input }) => configureThread(ctx.deps, ctx.agent, input)),

  get: operatorProcedure
    .input(z.object({ taskId: zId("tsk") }))
    .output(
      z.object({
        taskId: z.string(),
        agent: z.string(),
        kind: z.enum(["AGENT", "ORCHESTRATOR"]),
        config: zJsonRecord.nullable(),
        ownership: z.unknown().nullable(),
        updatedAt: z.string().nullable(),
      }),
    )
    .query(({ ctx, input }) => getThread(ctx.deps, ctx.operator.workspaceId, input.taskId)),
});

const zToolCallRecord = z.object({
  requestId: z.string(),
  callId: z.string(),
  tool: z.string(),
  args: z.unknown(),
  result: z.unknown().optional(),
  at: z.string(),
});

const zContinuityView = z.object({
  taskId: z.string(),
  agent: z.string(),
  strategy: z.enum(["restore", "reference"]).nullable(),
  toolCalls: z.array(zToolCallRecord),
  conversationId: z.string().nullable(),
  version: z.number(),
  sizeBytes: z.number(),
});

export const continuityRouter = router({
  /** What the task's agent left for its next request; requestId proves it is that agent. */
  load: agentProcedure
    .input(z.object({ taskId: zId("tsk"), requestId: zId("req") }))
    .output(zContinuityView)
    .query(({ ctx, input }) => loadContinuity(ctx.deps, ctx.agent, input)),

  record: agentProcedure
    .input(
      z.discriminatedUnion("strategy", [
        z.object({
          strategy: z.literal("restore"),
          taskId: zId("tsk"),
          requestId: zId("req"),
          toolCalls: z
            .array(
              z.object({
                callId: z.string().min(1).max(200),
                tool: zName,
                args: zJson(LIMITS.traceDataBytes).optional(),
                result: zJson(LIMITS.traceDataBytes).optional(),
                at: z.iso.datetime({ offset: true }).optional(),
              }),
            )
            .max(100),
          keepLast: z.number().int().min(0).max(1000).optional(),
        }),
        z.object({
          strategy: z.literal("reference"),
          taskId: zId("tsk"),
          requestId: zId("req"),
          conversationId: z.string().min(1).max(200).optional(),
        }),
      ]),
    )
    .output(
      z.discriminatedUnion("strategy", [
        zContinuityView.extend({ strategy: z.literal("restore"), pruned: z.number() }),
        zContinuityView.extend({ strategy: z.literal("reference"), conversationId: z.string(), created: z.boolean() }),
      ]),
    )
    .mutation(({ ctx, input }) => recordContinuity(ctx.deps, ctx.agent, input)),
});

const zEntity = z.object({ id: z.string(), name: z.string(), type: z.string().optional(), data: z.unknown().optional(), lastActiveAt: z.string() });

export const contextRouter = router({
  /** Marks entities active in the thread (its explicit state) as of now. */
  touch: agentProcedure
    .input(
      z.object({
        taskId: zId("tsk"),
        requestId: zId("req"),
        entities: z
          .array(z.object({ id: z.string().min(1).max(200), name: zName, type: z.string().max(100).optional(), data: zJson(LIMITS.traceDataBytes).optional() }))
          .min(1)
          .max(500),
      }),
    )
    .output(z.object({ taskId: z.string(), touched: z.number() }))
    .mutation(({ ctx, input }) => touchEntities(ctx.deps, ctx.agent, input)),

  /** A mutation because expired entities are cleared while assembling. */
  assemble: agentProcedure
    .input(
      z.object({
        taskId: zId("tsk"),
        lookups: z.array(z.string().trim().min(1).max(LIMITS.nameChars)).max(20).optional(),
        recentTurns: z.number().int().min(0).max(100).optional(),
        inactivityWindowMs: z.number().int().min(1).max(365 * 24 * 3600_000).optional(),
        lookupLimit: z.number().int().min(1).max(50).optional(),
      }),
    )
    .output(
      z.object({
        taskId: z.string(),
        explicit: z.object({ entities: z.array(zEntity) }),
        expired: z.array(z.string()),
        recentToolOutputs: z.array(z.object({ requestId: z.string(), calls: z.array(z.object({ id: z.string(), name: z.string() })) })),
        lookups: z.array(
          z.object({
            query: z.string(),
            matches: z.array(z.object({ id: z.string(), name: z.string(), type: z.string().optional(), score: z.number() })),
          }),
        ),
        sizeBytes: z.number(),
      }),
    )
    .mutation(({ ctx, input }) => assembleThreadContext(ctx.deps, ctx.agent, input)),
});
