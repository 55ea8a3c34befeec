// Approvals: agents request, await (long-poll or subscription) and report
// execution; operators list, read and decide.
import { tracked } from "@trpc/server";
import { z } from "zod";
import { LIMITS } from "../../domain/json.ts";
import { getApproval, listApprovals, viewerOf } from "../../services/approvals/approval-list.ts";
import { awaitApproval } from "../../services/approvals/await-approval.ts";
import { agentStateAtAsk } from "../../services/approvals/agent-state-at-ask.ts";
import { decideApproval } from "../../services/approvals/decide-approval.ts";
import { decideMany } from "../../services/approvals/decide-many.ts";
import { claimExecution } from "../../services/approvals/claim-execution.ts";
import { reportExecution } from "../../services/approvals/report-execution.ts";
import { reportNotRun } from "../../services/approvals/report-not-run.ts";
import { requestApproval } from "../../services/approvals/request-approval.ts";
import { openAgentDecisionStream } from "../../services/decision-stream.ts";
import { zAction, zApprovalResult, zApprovalStatus, zDecision, zToolAnnotations } from "../outputs.ts";
import { zCallName, zId, zJson, zName } from "../schemas.ts";
import { zCondition, zToolDefinition } from "./policy.types.ts";
import { agentProcedure, deciderProcedure, operatorProcedure, router } from "../trpc.ts";

const MAX_AWAIT_MS = 60_000;
const zClaimKey = z.string().min(1).max(200);

const zDecideResult = z.object({
  approvalId: z.string(),
  /** PENDING while a quorum waits for more approvers. */
  status: zApprovalStatus,
  decision: zDecision.optional(),
  approvals: z.array(z.object({ decidedBy: z.string(), decidedAt: z.string(), action: zAction })).optional(),
  required: z.number().optional(),
  remembered: z.object({ policyId: z.string(), name: z.string() }).optional(),
});

export const approvalRouter = router({
  request: agentProcedure
    .input(
      z.object({
        requestId: zId("req"),
        tool: zCallName,
        args: zJson(LIMITS.argsBytes),
        reason: z.string().max(LIMITS.messageChars).optional(),
        allow: z.array(zAction).min(1).optional(),
        // At most 24 days (the largest timer a JavaScript runtime schedules).
        timeoutMs: z.number().int().min(100).max(24 * 24 * 3600_000).optional(),
        // "approve" only where an admin's policy allows it for this call.
        onTimeout: z.enum(["reject", "cancel", "approve"]).optional(),
        idempotencyKey: z.string().min(1).max(200).optional(),
        externalId: z.string().min(1).max(LIMITS.externalIdChars).optional(),
        summary: z.string().min(1).max(LIMITS.summaryChars).optional(),
        // question: the agent waits for a free-text answer (respond), not for leave to run a tool;
        // form: for values of the fields `form` describes (an edit whose args are the answer).
        kind: z.enum(["tool", "question", "form"]).optional(),
        form: zJson(LIMITS.formBytes).optional(),
        batch: z.string().min(1).max(LIMITS.externalIdChars).optional(),
        annotations: zToolAnnotations.optional(),
        // The tool as its MCP server lists it (tollgate-mcp sends it): matched against the workspace's pins.
        toolDefinition: zToolDefinition.optional(),
      }),
    )
    .output(zApprovalResult)
    .mutation(({ ctx, input }) => requestApproval(ctx.deps, ctx.agent, input)),

  await: agentProcedure
    .input(z.object({ approvalId: zId("apr"), timeoutMs: z.number().int().min(0).max(MAX_AWAIT_MS).default(30_000) }))
    .output(zApprovalResult)
    .query(({ ctx, input }) => awaitApproval(ctx.deps, ctx.agent, input.approvalId, input.timeoutMs)),

  /**
   * Decisions as a server-sent event stream, for one request or task. Each
   * event is tracked by the approval id, so a reconnect with lastEventId
   * resumes after the last decision received.
   */
  onDecision: agentProcedure
    .input(
      z
        .object({ requestId: zId("req").optional(), taskId: zId("tsk").optional(), lastEventId: z.string().nullish() })
        .refine((value) => Boolean(value.requestId) !== Boolean(value.taskId), { message: "give exactly one of requestId or taskId" }),
    )
    .subscription(async ({ ctx, input, signal }) => {
      const stream = await openAgentDecisionStream(ctx.deps, ctx.agent, input, signal);
      return (async function* () {
        for await (const event of stream) yield tracked(event.cursor, event.result);
      })();
    }),

  /** Takes the approval's one execution claim before running the tool: granted to one replica only. */
  claimExecution: agentProcedure
    .input(z.object({ approvalId: zId("apr"), claimKey: zClaimKey }))
    .output(
      z.discriminatedUnion("granted", [
        z.object({ approvalId: z.string(), granted: z.literal(true), claimedAt: z.string() }),
        z.object({
          approvalId: z.string(),
          granted: z.literal(false),
          claimedAt: z.string(),
          execution: z.object({ args: z.unknown(), result: z.unknown(), at: z.string() }).nullable(),
        }),
      ]),
    )
    .mutation(({ ctx, input }) => claimExecution(ctx.deps, ctx.agent, input)),

  reportExecution: agentProcedure
    .input(
      z.object({
        approvalId: zId("apr"),
        executedArgs: zJson(LIMITS.argsBytes),
        result: zJson(LIMITS.argsBytes).optional(),
        /** The key the execution was claimed with; a report under another replica's claim is refused. */
        claimKey: zClaimKey.optional(),
      }),
    )
    .output(z.object({ approvalId: z.string() }))
    .mutation(({ ctx, input }) => reportExecution(ctx.deps, ctx.agent, input)),

  /** A decided call that did not run, and why; it then never runs. */
  reportNotRun: agentProcedure
    .input(z.object({ approvalId: zId("apr"), reason: z.string().trim().min(1).max(LIMITS.messageChars) }))
    .output(z.object({ approvalId: z.string(), reason: z.string() }))
    .mutation(({ ctx, input }) => reportNotRun(ctx.deps, ctx.agent, input)),

  list: operatorProcedure
    .input(
      z
        .object({
          status: z.union([zApprovalStatus, z.literal("DECIDED")]).optional(),
          sessionId: zId("ses").optional(),
          agent: z.string().max(LIMITS.nameChars).optional(),
          tool: z.string().max(LIMITS.nameChars).optional(),
          text: z.string().max(200, "must be at most 200 characters").optional(),
          approvalIds: z.array(zId("apr")).min(1, "name at least one approval").max(100, "at most 100 approvals at once").optional(),
          requestId: zId("req").optional(),
          batch: z.string().min(1).max(LIMITS.externalIdChars).optional(),
          limit: z.number().int().min(1).max(2000).default(200),
          cursor: zId("apr").optional(),
        })
        .default({ limit: 200 }),
    )
    .query(async ({ ctx, input }) => listApprovals(ctx.deps, ctx.operator.workspaceId, input, await viewerOf(ctx.deps, ctx.operator.operatorId, ctx.operator.email))),

  get: operatorProcedure
    .input(z.object({ approvalId: zId("apr") }))
    .query(async ({ ctx, input }) => getApproval(ctx.deps, ctx.operator.workspaceId, input.approvalId, await viewerOf(ctx.deps, ctx.operator.operatorId, ctx.operator.email))),

  /** The agent's thread state when it asked (owner-annotated), and its change since the task's previous ask. */
  agentState: operatorProcedure
    .input(z.object({ approvalId: zId("apr") }))
    .query(({ ctx, input }) => agentStateAtAsk(ctx.deps, ctx.operator.workspaceId, input.approvalId)),

  decide: deciderProcedure
    .input(
      z.object({
        approvalId: zId("apr"),
        action: zAction,
        args: zJson(LIMITS.argsBytes).optional(),
        message: z.string().max(LIMITS.messageChars).optional(),
        remember: z
          .object({ scope: z.enum(["session", "hour", "always"]), args: z.array(zCondition).max(20).optional() })
          .optional(),
      }),
    )
    .output(zDecideResult)
    .mutation(({ ctx, input }) => decideApproval(ctx.deps, ctx.operator, input)),

  /** The same decision for several approvals; each result says what happened to that one. */
  decideMany: deciderProcedure
    .input(
      z.object({
        approvalIds: z.array(zId("apr")).min(1).max(500),
        action: z.enum(["approve", "reject", "respond"]),
        message: z.string().max(LIMITS.messageChars).optional(),
      }),
    )
    .output(
      z.object({
        results: z.array(
          z.discriminatedUnion("ok", [
            zDecideResult.extend({ ok: z.literal(true) }),
            z.object({ ok: z.literal(false), approvalId: z.string(), code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).nullable() }),
          ]),
        ),
      }),
    )
    .mutation(async ({ ctx, input }) => ({ results: await decideMany(ctx.deps, ctx.operator, input) })),
});
