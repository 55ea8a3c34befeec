// Every decision and every rule's decision in a workspace chains to the
// workspace's one audit head. When many come at once, an ask or a decision
// that read the head unlocked finds it taken at its write more often than
// not, and is made a second time behind the locks: queueing on the audit lock
// from the start is cheaper then. So a workspace whose head was found taken
// asks and decides behind the locks for ten seconds, and reads first and
// checks at its write again after that.
import { LRUCache } from "lru-cache";

const WINDOW_MS = 10_000;
const MAX_WORKSPACES = 10_000;

export class AuditHeadContention {
  readonly #until = new LRUCache<string, number>({ max: MAX_WORKSPACES });

  /** An ask or a decision in this workspace found the audit head taken at its write. */
  noted(workspaceId: string, now: Date): void {
    this.#until.set(workspaceId, now.getTime() + WINDOW_MS);
  }

  /** Whether asks and decisions in this workspace go behind the locks from the start, for now. */
  contended(workspaceId: string, now: Date): boolean {
    const until = this.#until.get(workspaceId);
    if (until === undefined) return false;
    if (until > now.getTime()) return true;
    this.#until.delete(workspaceId);
    return false;
  }
}
