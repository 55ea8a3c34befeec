// The audit entry this node last wrote in each workspace, once committed. A
// decision on an approval this node opened (OpenedApprovals), and a rule's
// decision on remembered facts (GateFactsCache), chain to it instead of
// reading the head first: on a node that writes a workspace's entries (in
// turns: AuditTurns) it is the head, and the write checks behind the audit
// lock that it still is (by seq and hash: tollgate_audit_head_is) and answers
// 'contended' when it is not. The head is then read and the call made again,
// and for ten seconds this node reads the workspace's head rather than guess
// it (another node, or another writer, is moving it).
import { LRUCache } from "lru-cache";
import type { AuditHead } from "../audit.ts";

const MISSED_WINDOW_MS = 10_000;
const MAX_ENTRIES = 10_000;

export class WrittenAuditHeads {
  readonly #heads = new LRUCache<string, AuditHead>({ max: MAX_ENTRIES });
  readonly #missedUntil = new LRUCache<string, number>({ max: MAX_ENTRIES });

  /** The workspace's head as this node last wrote it; none while a guess recently missed. */
  get(workspaceId: string, now: Date): AuditHead | undefined {
    const until = this.#missedUntil.get(workspaceId);
    if (until !== undefined) {
      if (until > now.getTime()) return undefined;
      this.#missedUntil.delete(workspaceId);
    }
    return this.#heads.get(workspaceId);
  }

  /** The entry this node last wrote in the workspace, even while its guesses are not trusted: newer than a head read before it, or not. */
  latest(workspaceId: string): AuditHead | undefined {
    return this.#heads.get(workspaceId);
  }

  /** An entry this node wrote, called after the write committed; writes that finish out of order keep the newest. */
  written(workspaceId: string, head: AuditHead): void {
    const known = this.#heads.get(workspaceId);
    if (known && known.seq > head.seq) return;
    this.#heads.set(workspaceId, { seq: head.seq, hash: head.hash });
  }

  /** A write found the guessed head taken. */
  missed(workspaceId: string, now: Date): void {
    this.#heads.delete(workspaceId);
    this.#missedUntil.set(workspaceId, now.getTime() + MISSED_WINDOW_MS);
  }
}
