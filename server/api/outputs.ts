// Zod shapes of what procedures return, shared by several routers.
import { z } from "zod";

export const zRunStatus = z.enum(["RUNNING", "PAUSED", "COMPLETED", "FAILED", "CANCELED"]);
export const zApprovalStatus = z.enum(["PENDING", "APPROVED", "REJECTED", "EXPIRED", "CANCELED"]);
export const zAction = z.enum(["approve", "reject", "edit", "respond"]);

export const zDecision = z.object({
  action: zAction,
  args: z.unknown().optional(),
  message: z.string().optional(),
  decidedBy: z.string(),
  decidedAt: z.string(),
  decider: z.enum(["operator", "policy", "timeout", "system"]).optional(),
  policyId: z.string().optional(),
  receipt: z.string().optional(),
});

export const zGate = z.object({
  policyId: z.string().nullable(),
  policy: z.string().nullable(),
  allow: z.array(zAction),
  role: z.enum(["ADMIN", "OPERATOR", "VIEWER"]),
  approvers: z.number(),
  expiresAt: z.string().nullable(),
  onTimeout: z.enum(["reject", "approve", "cancel"]),
});

/** A tool's MCP annotations (hints only): strict, so a misspelt hint is refused rather than lost. */
export const zToolAnnotations = z
  .object({
    title: z.string().trim().min(1).max(200).optional(),
    readOnlyHint: z.boolean().optional(),
    destructiveHint: z.boolean().optional(),
    idempotentHint: z.boolean().optional(),
    openWorldHint: z.boolean().optional(),
  })
  .strict();

export const zApprovalResult = z.object({
  approvalId: z.string(),
  status: zApprovalStatus,
  decision: zDecision.optional(),
  /** While pending: the gate it waits under (the rule or default, narrowed by the agent's ask). */
  gate: zGate.optional(),
  /** Set once the agent reported what ran (approval.reportExecution). */
  execution: z.object({ args: z.unknown(), result: z.unknown(), at: z.string() }).optional(),
  /** The tool's MCP annotations, as the agent sent them with the request. */
  annotations: zToolAnnotations.optional(),
});
