// The console's bulk actions: one decision for many approvals.
import { DomainError } from "../../domain/errors.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import { log } from "../../log.ts";
import type { ServiceDeps } from "../deps.ts";
import { decideApproval, type DecideResult } from "./decide-approval.ts";

export type DecideManyItem =
  | ({ ok: true } & DecideResult)
  | { ok: false; approvalId: string; code: string; message: string; details: Record<string, unknown> | null };

/**
 * One decision for many approvals (the console's bulk actions). Each is its
 * own write-once decision in its own transaction, so one that another operator
 * decided first does not hold back the rest; the answer says what happened to each.
 */
export async function decideMany(
  deps: ServiceDeps,
  operator: OperatorPrincipal,
  input: { approvalIds: string[]; action: "approve" | "reject" | "respond"; message?: string },
): Promise<DecideManyItem[]> {
  const results: DecideManyItem[] = [];
  for (const approvalId of new Set(input.approvalIds)) {
    try {
      results.push({ ok: true, ...(await decideApproval(deps, operator, { approvalId, action: input.action, message: input.message })) });
    } catch (error) {
      if (error instanceof DomainError) {
        results.push({ ok: false, approvalId, code: error.code, message: error.message, details: error.details ?? null });
      } else {
        // The others are still decided; this one is reported, not thrown, so the answer stays complete.
        log.error(`decideMany: deciding ${approvalId} failed`, error);
        results.push({ ok: false, approvalId, code: "INTERNAL", message: "an internal error stopped this decision; it has been logged, try again", details: null });
      }
    }
  }
  return results;
}
