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
import AsyncLock from "async-lock";

export class AuditTurns {
  // Every writer waits its turn: a burst of decisions queues here, not in the database.
  readonly #lock = new AsyncLock({ maxPending: Number.POSITIVE_INFINITY });

  /** Waits for this node's turn at the workspace's audit chain; the turn is held until `leave` is called. */
  enter(workspaceId: string): Promise<() => void> {
    return new Promise((entered, failed) => {
      this.#lock.acquire(workspaceId, (leave) => entered(() => leave())).catch(failed);
    });
  }

  /** Runs `write` in this node's turn at the workspace's audit chain. */
  async take<T>(workspaceId: string, write: () => Promise<T>): Promise<T> {
    const leave = await this.enter(workspaceId);
    try {
      return await write();
    } finally {
      leave();
    }
  }
}
