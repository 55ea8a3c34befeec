// Decisions in one workspace that queue for this node's turn at its audit
// chain (AuditTurns) are written together: the writer whose turn comes takes
// every decision queued behind it, chains their audit entries one after
// another, and ends them all in one statement. One after another, each
// decision's statement waited for the one before to come back from the
// database, and under load that wait was most of a decision's time; together
// they take one round trip and one commit. A decision that finds the turn free
// is written alone, at once, as before.
import type { AuditTurns } from "./audit-turns.ts";

/** At most this many decisions go into one statement; the rest wait for the next turn. */
const MAX_BATCH = 32;

/** Why a queued decision was not written here: its caller decides it another way. */
export type NotWritten = "read it" | "turn missed";

interface Queued<Item, Written> {
  item: Item;
  settle: (outcome: Written | NotWritten) => void;
  fail: (error: unknown) => void;
  /** Settles "turn missed" if the decision is still queued when the turn's wait is over. */
  deadline: NodeJS.Timeout;
}

/**
 * Writes a batch in the workspace's turn: an outcome per item, in order, or
 * "read it" for all of them when the batch could not be written as chained.
 */
export type WriteBatch<Item, Written> = (workspaceId: string, items: Item[]) => Promise<Written[] | "read it">;

export class DecisionBatches<Item, Written> {
  // A workspace is here while a writer runs for it; its queue is what waits for the next turn.
  readonly #queues = new Map<string, Queued<Item, Written>[]>();

  constructor(
    private readonly turns: AuditTurns,
    private readonly writeBatch: WriteBatch<Item, Written>,
  ) {}

  /**
   * Queues a decision and resolves with what its batch wrote for it;
   * "read it" when the batch could not be written as chained (an approval
   * ended meanwhile, the head was taken, this node does not know the head, the
   * write failed for one of several), "turn missed" when no turn came for it
   * within the turn's wait (the writer before is stuck on the database, say).
   */
  write(workspaceId: string, item: Item): Promise<Written | NotWritten> {
    return new Promise((settle, fail) => {
      let queue = this.#queues.get(workspaceId);
      const starts = !queue;
      queue ??= [];
      const queued: Queued<Item, Written> = {
        item,
        settle,
        fail,
        deadline: setTimeout(() => {
          const at = queue.indexOf(queued);
          if (at < 0) return;
          queue.splice(at, 1);
          settle("turn missed");
        }, this.turns.waitMs).unref(),
      };
      queue.push(queued);
      if (starts) {
        this.#queues.set(workspaceId, queue);
        void this.#writeInTurns(workspaceId, queue);
      }
    });
  }

  /** Writes what is queued, a batch per turn, until the queue is empty. */
  async #writeInTurns(workspaceId: string, queue: Queued<Item, Written>[]): Promise<void> {
    while (queue.length > 0) {
      const leave = await this.turns.enter(workspaceId);
      const batch = queue.splice(0, leave ? MAX_BATCH : queue.length);
      for (const each of batch) clearTimeout(each.deadline);
      if (batch.length === 0) {
        // Every decision queued went behind the locks while this writer waited.
        leave?.();
        continue;
      }
      if (!leave) {
        for (const each of batch) each.settle("turn missed");
        continue;
      }
      try {
        const written = await this.writeBatch(workspaceId, batch.map((each) => each.item));
        batch.forEach((each, index) => each.settle(written === "read it" ? "read it" : written[index]!));
      } catch (error) {
        // One decision's failure (its receipt, say) is not the others': each is then decided on its own.
        if (batch.length === 1) batch[0]!.fail(error);
        else for (const each of batch) each.settle("read it");
      } finally {
        leave();
      }
    }
    this.#queues.delete(workspaceId);
  }
}
