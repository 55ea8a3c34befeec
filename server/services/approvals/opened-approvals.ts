// The approvals this node put before a person, as it wrote them, so that a
// decision made on this node need not read the approval first: with the
// workspace's audit head known too (WrittenAuditHeads), approval.decide is its
// write alone. The write checks behind the locks what can change while an
// approval is pending: that it still is, and that the audit head is still the
// entry the decision chains to. Nothing else a decision is checked against
// changes while it is pending (who may decide, how, what was asked, the
// agent, the request's webhook address); an escalation or a reminder changes
// whom the node asks and writes an audit entry, which moves the head.
import { LRUCache } from "lru-cache";
import type { Approval } from "../../db/generated/client.ts";
import type { GateFacts } from "./gate-facts-cache.ts";
import type { ApprovalWithAgent } from "./finish-approval.ts";

const MAX_ENTRIES = 10_000;
/** The arguments are kept with the approval: an approval with large ones is read when decided instead. */
const MAX_BYTES = 16 * 1024 * 1024;
const MAX_ENTRY_BYTES = 64 * 1024;

/** What a decision needs besides the audit head, as tollgate_read_approval_before_ending reads it. */
export interface OpenedApproval {
  approval: ApprovalWithAgent;
  /** The request's webhook address, if it has one. */
  resumeUrl: string | null;
}

export class OpenedApprovals {
  // Decided ones are taken out; the least recently opened of the rest go first.
  readonly #entries = new LRUCache<string, OpenedApproval>({ max: MAX_ENTRIES, maxSize: MAX_BYTES, maxEntrySize: MAX_ENTRY_BYTES, sizeCalculation: bytesOf });

  /**
   * A pending approval this node wrote, with the facts of its request. Kept
   * only when one approver decides it (a quorum collects votes behind the
   * locks) and the facts know the request's webhook address (the node began
   * the request).
   */
  opened(approval: Approval, facts: GateFacts | undefined): void {
    if (approval.status !== "PENDING" || approval.requiredApprovals !== 1 || facts?.resumeUrl === undefined || facts.id !== approval.requestId) return;
    this.#entries.set(key(approval.workspaceId, approval.id), { approval: { ...approval, task: { agent: facts.agent } }, resumeUrl: facts.resumeUrl });
  }

  /** The approval as opened, forgotten as it is taken: a decision either ends it or reads it again. */
  take(workspaceId: string, approvalId: string): OpenedApproval | undefined {
    const entryKey = key(workspaceId, approvalId);
    const entry = this.#entries.get(entryKey);
    if (entry) this.#entries.delete(entryKey);
    return entry;
  }
}

function key(workspaceId: string, approvalId: string): string {
  return `${workspaceId}\n${approvalId}`;
}

function bytesOf({ approval }: OpenedApproval): number {
  return 1024 + JSON.stringify(approval.proposedArgs ?? null).length + (approval.form === null ? 0 : JSON.stringify(approval.form).length);
}
