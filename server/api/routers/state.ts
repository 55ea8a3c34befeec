// Thread state: agents load and save it (and write MEMORY keys through
// remember); operators read its history, one version, and diffs between two.
import { z } from "zod";
import { LIMITS } from "../../domain/json.ts";
import { OWNERS } from "../../domain/thread/ownership.ts";
import { loadState, rememberState, saveState, stateDiff, stateHistory, stateVersion } from "../../services/thread-state.ts";
import { zId, zJson } from "../schemas.ts";
import { agentProcedure, operatorProcedure, router } from "../trpc.ts";

const zVersion = z.number().int().min(0).max(2_147_483_647);
const zStateObject = z.record(z.string(), z.unknown());
const zSaveResult = z.object({ taskId: z.string(), version: z.number(), sizeBytes: z.number(), unchanged: z.boolean() });
const zOwnership = z.object({ owner: z.enum(OWNERS), protocol: z.string().optional() });

export const stateRouter = router({
  load: agentProcedure
    .input(z.object({ taskId: zId("tsk") }))
    .output(
      z.object({
        taskId: z.string(),
        version: z.number(),
        config: zStateObject.nullable(),
        ownership: z.unknown().nullable(),
        state: zStateObject.nullable(),
      }),
    )
    .query(({ ctx, input }) => loadState(ctx.deps, ctx.agent, input.taskId)),

  save: agentProcedure
    .input(
      z.object({
        taskId: zId("tsk"),
        requestId: zId("req"),
        // Checked for size (and stored as its JSON text) by the service: a
        // deep zod JSON check would cost more than the save itself at 100 KB.
        state: zStateObject,
        baseVersion: zVersion.optional(),
      }),
    )
    .output(zSaveResult)
    .mutation(({ ctx, input }) => saveState(ctx.deps, ctx.agent, input)),

  /** The memory operations: set MEMORY-owned keys (null removes one) on the latest version. */
  remember: agentProcedure
    .input(
      z.object({
        taskId: zId("tsk"),
        requestId: zId("req"),
        memory: z.record(z.string().min(1).max(LIMITS.nameChars), zJson(LIMITS.stateBytes)),
        baseVersion: zVersion.optional(),
      }),
    )
    .output(zSaveResult)
    .mutation(({ ctx, input }) => rememberState(ctx.deps, ctx.agent, input)),

  history: operatorProcedure
    .input(z.object({ taskId: zId("tsk") }))
    .output(
      z.object({
        taskId: z.string(),
        versions: z.array(z.object({ version: z.number(), requestId: z.string().nullable(), createdAt: z.string(), sizeBytes: z.number() })),
      }),
    )
    .query(({ ctx, input }) => stateHistory(ctx.deps, ctx.operator.workspaceId, input.taskId)),

  /** One version with the owner of each key; the latest when version is left out. */
  get: operatorProcedure
    .input(z.object({ taskId: zId("tsk"), version: zVersion.min(1).optional() }))
    .output(
      z.object({
        taskId: z.string(),
        version: z.number(),
        requestId: z.string().nullable(),
        createdAt: z.string().nullable(),
        sizeBytes: z.number(),
        state: zStateObject.nullable(),
        owners: z.record(z.string(), zOwnership),
      }),
    )
    .query(({ ctx, input }) => stateVersion(ctx.deps, ctx.operator.workspaceId, input.taskId, input.version)),

  diff: operatorProcedure
    .input(z.object({ taskId: zId("tsk"), fromVersion: zVersion, toVersion: zVersion }))
    .output(
      z.object({
        taskId: z.string(),
        fromVersion: z.number(),
        toVersion: z.number(),
        operations: z.array(
          z.object({
            op: z.enum(["add", "remove", "replace", "move", "copy", "test"]),
            path: z.string(),
            value: z.unknown().optional(),
            from: z.string().optional(),
          }),
        ),
        keys: z.array(
          z.object({
            key: z.string(),
            change: z.enum(["added", "removed", "changed"]),
            owner: z.enum(OWNERS).nullable(),
            protocol: z.string().optional(),
          }),
        ),
      }),
    )
    .query(({ ctx, input }) => stateDiff(ctx.deps, ctx.operator.workspaceId, input)),
});
