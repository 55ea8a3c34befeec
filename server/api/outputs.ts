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
});

export const zApprovalResult = z.object({
  approvalId: z.string(),
  status: zApprovalStatus,
  decision: zDecision.optional(),
  /** Set once the agent reported what ran (approval.reportExecution). */
  execution: z.object({ args: z.unknown(), result: z.unknown(), at: z.string() }).optional(),
});
