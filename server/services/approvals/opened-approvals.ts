// The approvals this node put before a person, as it wrote them, so that a
// decision made on this node need not read the approval first: with the
// workspace's audit head known too (WrittenAuditHeads), approval.decide is its
// write alone. The write checks behind the locks that the approval is still
// pending and the audit head still the entry the decision chains to. What a
// decision is checked against, and what its receipt and audit entry state,
// never changes while an approval is pending: who may decide, how, what was
// asked (tool, arguments, form, rule), the agent, the request's webhook
// address. What does change (whom it is asked of and when it escalates or
// reminds, when the agent last asked) no decision reads; the approval the
// decision publishes carries those columns as they were when it was opened.
import { LRUCache } from "lru-cache";
import type { Approval } from "../../db/generated/client.ts";
import type { GateFacts } from "./gate-facts-cache.ts";
import type { ApprovalWithAgent } from "./finish-approval.ts";

const MAX_ENTRIES = 5_000;
/** Sizes are the approval's JSON, counted twice (a parsed object takes more than its text): an approval with large arguments or a long summary is read when decided instead. */
const MAX_BYTES = 32 * 1024 * 1024;
const MAX_ENTRY_BYTES = 128 * 1024;
/** One a person leaves for longer costs its decision one read. */
const TTL_MS = 10 * 60_000;

/** What a decision needs besides the audit head, as tollgate_read_approval_before_ending reads it. */
export interface OpenedApproval {
  approval: ApprovalWithAgent;
  /** The request's webhook address, if it has one. */
  resumeUrl: string | null;
}

export class OpenedApprovals {
  // Decided ones are taken out; the least recently opened of the rest go first.
  readonly #entries = new LRUCache<string, OpenedApproval>({ max: MAX_ENTRIES, maxSize: MAX_BYTES, maxEntrySize: MAX_ENTRY_BYTES, ttl: TTL_MS });

  /**
   * A pending approval this node wrote (`jsonLength`: the length of the JSON
   * the write sent), with the facts of its request. Kept only when one
   * approver decides it (a quorum collects votes behind the locks) and the
   * facts know the request's webhook address (the node began the request).
   */
  opened(approval: Approval, jsonLength: number, facts: GateFacts | undefined): void {
    if (approval.status !== "PENDING" || approval.requiredApprovals !== 1 || facts?.resumeUrl === undefined || facts.id !== approval.requestId) return;
    const entry = { approval: { ...approval, task: { agent: facts.agent } }, resumeUrl: facts.resumeUrl };
    this.#entries.set(key(approval.workspaceId, approval.id), entry, { size: 512 + 2 * jsonLength });
  }

  /** The approval as opened, forgotten as it is taken: a decision either ends it or reads it again. */
  take(workspaceId: string, approvalId: string): OpenedApproval | undefined {
    const entryKey = key(workspaceId, approvalId);
    const entry = this.#entries.get(entryKey);
    if (!entry) return undefined;
    // Deleting a cache's last entry empties it with clear(), which fills every
    // one of its MAX_ENTRIES slots (37 µs with a TTL, at each decision while one
    // approval is pending on the node); popping it, the least recently used
    // being the only one, frees its slot alone.
    if (this.#entries.size === 1) this.#entries.pop();
    else this.#entries.delete(entryKey);
    return entry;
  }
}

function key(workspaceId: string, approvalId: string): string {
  return `${workspaceId}\n${approvalId}`;
}
