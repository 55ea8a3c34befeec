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
   * ended meanwhile, the head was taken, this node does not know the head),
   * "turn missed" when the turn did not come in time.
   */
  write(workspaceId: string, item: Item): Promise<Written | NotWritten> {
    return new Promise((settle, fail) => {
      const queue = this.#queues.get(workspaceId);
      if (queue) {
        queue.push({ item, settle, fail });
        return;
      }
      const started = [{ item, settle, fail }];
      this.#queues.set(workspaceId, started);
      void this.#writeInTurns(workspaceId, started);
    });
  }

  /** Writes what is queued, a batch per turn, until the queue is empty. */
  async #writeInTurns(workspaceId: string, queue: Queued<Item, Written>[]): Promise<void> {
    while (queue.length > 0) {
      const leave = await this.turns.enter(workspaceId);
      const batch = queue.splice(0, MAX_BATCH);
      if (!leave) {
        for (const each of batch) each.settle("turn missed");
        continue;
      }
      try {
        const written = await this.writeBatch(workspaceId, batch.map((each) => each.item));
        batch.forEach((each, index) => each.settle(written === "read it" ? "read it" : written[index]!));
      } catch (error) {
        for (const each of batch) each.fail(error);
      } finally {
        leave();
      }
    }
    this.#queues.delete(workspaceId);
  }
}
