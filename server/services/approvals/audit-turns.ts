// The writers of a workspace's audit chain on this node (decisions, and asks
// a rule decides) take turns. Each chains its entry to the head it knows and
// writes in one statement that checks, behind the workspace's audit lock, that
// the head is still that entry. Concurrent writers on one node would race for
// the head, most of them would find it taken, and the workspace would go behind
// the locks (AuditHeadContention): a transaction of several round trips per
// write, each holding the audit lock throughout. Taking turns, each writer
// knows the head its predecessor wrote, and the audit lock is held for one
// statement. A writer on another node still takes the head now and then, which
// the write's check finds as before.
//
// A turn comes before every database lock (locks.ts) and is never taken inside
// a transaction or inside another turn.
import AsyncLock from "async-lock";

/** How long a writer waits for its turn before it goes behind the locks instead, where the database's audit lock queues it. */
const DEFAULT_WAIT_MS = 5_000;

export class AuditTurns {
  // Every writer waits its turn: a burst of decisions queues here, not in the database.
  readonly #lock: AsyncLock;
  /** How long a writer waits for its turn before it goes behind the locks instead. */
  readonly waitMs: number;

  constructor({ waitMs = DEFAULT_WAIT_MS }: { waitMs?: number } = {}) {
    this.waitMs = waitMs;
    this.#lock = new AsyncLock({ maxPending: Number.POSITIVE_INFINITY, timeout: waitMs });
  }

  /**
   * Waits for this node's turn at the workspace's audit chain; the turn is
   * held until `leave` is called. Undefined when the turn did not come in
   * time (the writer before is stuck on the database, say).
   */
  enter(workspaceId: string): Promise<(() => void) | undefined> {
    return new Promise((entered) => {
      this.#lock.acquire(workspaceId, (leave) => entered(() => leave())).catch(() => entered(undefined));
    });
  }
}
