// What happened to each approval of a bulk decision, in words an operator can
// act on: decided by them, already decided by someone else, waiting for more
// approvers, skipped because the agent does not allow the action, or failed.
import { decidedByMe } from "@/lib/errors";
import type { ApprovalItem, Outputs } from "@/lib/types";

export type BulkAction = "approve" | "reject";
type DecideManyResult = Outputs["approval"]["decideMany"]["results"][number];

export type BulkOutcomeKind = "done" | "voted" | "late" | "skipped" | "failed";

export interface BulkOutcome {
  approvalId: string;
  tool: string;
  agent: string;
  kind: BulkOutcomeKind;
  /** "approved", "already decided by ana@example.com", "1 of 2 approvals so far"… */
  text: string;
}

const DONE: Record<BulkAction, string> = { approve: "approved", reject: "rejected" };

export function bulkOutcomes(targets: readonly ApprovalItem[], action: BulkAction, results: readonly DecideManyResult[], email: string, failure?: string): BulkOutcome[] {
  const byId = new Map(results.map((result) => [result.approvalId, result]));
  return targets.map((item) => {
    const base = { approvalId: item.approvalId, tool: item.tool, agent: item.agent };
    if (!item.allow.includes(action)) return { ...base, kind: "skipped", text: `skipped: the agent does not allow ${action}` };
    const result = byId.get(item.approvalId);
    if (!result) return { ...base, kind: "failed", text: `failed: ${failure ?? "no answer from the server"}` };
    if (!result.ok) {
      const by = typeof result.details?.decidedBy === "string" ? result.details.decidedBy : null;
      return result.code === "CONFLICT" && by ? { ...base, kind: "late", text: `already decided by ${by}` } : { ...base, kind: "failed", text: `failed: ${result.message}` };
    }
    if (!decidedByMe(result, email)) return { ...base, kind: "late", text: `already decided by ${result.decision?.decidedBy ?? "another operator"}` };
    if (result.status === "PENDING") return { ...base, kind: "voted", text: `your approval counted: ${result.approvals?.length ?? 1} of ${result.required ?? "?"} so far` };
    return { ...base, kind: "done", text: DONE[action] };
  });
}

/** "You approved 3 of 5. 1 already decided by ana@example.com. 1 skipped." */
export function bulkSummary(outcomes: readonly BulkOutcome[], action: BulkAction): string {
  const count = (kind: BulkOutcomeKind) => outcomes.filter((outcome) => outcome.kind === kind).length;
  const parts = [`You ${DONE[action]} ${count("done")} of ${outcomes.length}.`];
  if (count("voted")) parts.push(`${count("voted")} counted toward a quorum.`);
  if (count("late")) parts.push(`${count("late")} already decided by someone else.`);
  if (count("skipped")) parts.push(`${count("skipped")} skipped.`);
  if (count("failed")) parts.push(`${count("failed")} failed.`);
  return parts.join(" ");
}
