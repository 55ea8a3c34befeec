// Requests: agents begin, complete, fail and trace them; operators read one with its chain.
import { z } from "zod";
import { LIMITS } from "../../domain/json.ts";
import { beginRequest, endRequest, traceRequest } from "../../services/requests.ts";
import { loadRequest } from "../../services/requests/load-request.ts";
import { delegateRequest } from "../../services/requests/delegate-request.ts";
import { DELEGATION_PATTERN, DELEGATION_TTL } from "../../domain/delegation.ts";
import { requestWithChain } from "../../services/tasks.ts";
import { zApprovalResult, zRunStatus } from "../outputs.ts";
import { zCallName, zId, zJson, zName } from "../schemas.ts";
import { agentProcedure, operatorProcedure, router } from "../trpc.ts";

const zEndResult = z.object({ requestId: z.string(), status: zRunStatus });

/** What begins a request, shared by request.begin and run.begin (a durable run's request). */
export const zBeginFields = z.object({
  sessionId: zId("ses"),
  agent: zCallName,
  kind: z.enum(["agent", "orchestrator"]).optional(),
  taskId: zId("tsk").optional(),
  parentRequestId: zId("req").optional(),
  /** The parent's key's token (request.delegate), when the parent is another key's request. */
  delegation: z.string().regex(DELEGATION_PATTERN, "must be a delegation token as request.delegate returns it").optional(),
  input: zJson(LIMITS.inputBytes).optional(),
  resumeUrl: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).max(2000).optional(),
  framework: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{0,39}$/, 'must be a short lowercase name such as "langgraph" or "openai-agents"')
    .optional(),
});

export const requestRouter = router({
  begin: agentProcedure
    .input(
      zBeginFields.extend({
        idempotencyKey: z.string().min(1).max(200).optional(),
        resumeToken: z.string().min(1).max(LIMITS.resumeTokenChars).optional(),
      }),
    )
    .output(z.object({ sessionId: z.string(), taskId: z.string(), requestId: z.string() }))
    .mutation(({ ctx, input }) => beginRequest(ctx.deps, ctx.agent, { ...input, traceparent: ctx.traceparent })),

  /**
   * A token by which the agent this request calls, with another agent key,
   * begins its request under this one (request.begin's parentRequestId and
   * delegation). Short-lived; signed, never stored.
   */
  delegate: agentProcedure
    .input(z.object({ requestId: zId("req"), ttlSeconds: z.number().int().min(1).max(DELEGATION_TTL.maxSeconds).optional() }))
    .output(z.object({ parentRequestId: z.string(), delegation: z.string(), expiresAt: z.string() }))
    .mutation(({ ctx, input }) => delegateRequest(ctx.deps, ctx.agent, input.requestId, input.ttlSeconds)),

  complete: agentProcedure
    .input(z.object({ requestId: zId("req"), output: zJson(LIMITS.inputBytes).optional() }))
    .output(zEndResult)
    .mutation(({ ctx, input }) => endRequest(ctx.deps, ctx.agent, input.requestId, "complete", { output: input.output })),

  fail: agentProcedure
    .input(
      z.object({
        requestId: zId("req"),
        error: z.object({ message: z.string().min(1).max(LIMITS.messageChars), code: z.string().max(100).optional() }),
      }),
    )
    .output(zEndResult)
    .mutation(({ ctx, input }) => endRequest(ctx.deps, ctx.agent, input.requestId, "fail", { error: input.error })),

  trace: agentProcedure
    .input(
      z.object({
        requestId: zId("req"),
        events: z
          .array(z.object({ type: zName, name: z.string().max(LIMITS.nameChars).optional(), data: zJson(LIMITS.traceDataBytes).optional() }))
          .min(1)
          .max(LIMITS.traceEventsPerCall),
      }),
    )
    .output(z.object({ accepted: z.number() }))
    .mutation(({ ctx, input }) => traceRequest(ctx.deps, ctx.agent, input.requestId, input.events)),

  /** For the process that resumes a request: its resumeToken and its approvals, by the framework's ids. */
  load: agentProcedure
    .input(z.object({ requestId: zId("req") }))
    .output(
      z.object({
        requestId: z.string(),
        sessionId: z.string(),
        taskId: z.string(),
        agent: z.string(),
        status: zRunStatus,
        resumeToken: z.string().nullable(),
        approvals: z.array(zApprovalResult.extend({ tool: z.string(), externalId: z.string().nullable() })),
      }),
    )
    .query(({ ctx, input }) => loadRequest(ctx.deps, ctx.agent, input.requestId)),

  get: operatorProcedure
    .input(z.object({ requestId: zId("req") }))
    .query(({ ctx, input }) => requestWithChain(ctx.deps, ctx.operator.workspaceId, input.requestId)),
});
