// The connection an SDK client holds for decisions: one socket.io connection
// per client, on which the server pushes the decision of every approval its
// agent key asked for the moment it commits, instead of one HTTP long-poll per
// approval. Long-polling remains the fallback whenever the socket is down.
import { io, type Socket } from "socket.io-client";
import type { ApprovalResult } from "./contract.ts";

/** What the server pushes: the same shape approval.await answers, without an execution report. */
export type PushedDecision = Pick<ApprovalResult, "approvalId" | "status" | "decision">;

// Decisions pushed before anyone waits for them (the answer to approval.request
// can arrive after the decision does); kept briefly, bounded.
const RECENT_LIMIT = 1_000;
const CONNECT_TIMEOUT_MS = 5_000;

export class DecisionPush {
  readonly #socket: Socket;
  /** Bumped on every (re)connect and resync: a waiter that asked during one epoch missed nothing while it lasts. */
  #epoch = 0;
  #firstAttempt: Promise<void>;
  readonly #waiters = new Map<string, Set<(pushed: PushedDecision | null) => void>>();
  readonly #recent = new Map<string, PushedDecision>();

  /** `holder` names this process: when its connection closes, the durable runs it drove may be taken over at once. */
  constructor(url: string, agentKey: string, holder: string) {
    this.#socket = io(url, {
      path: "/socket.io",
      transports: ["websocket"],
      auth: { agentKey, holder },
      // The held connection alone must not keep a finished agent process alive.
      autoUnref: true,
    });
    this.#firstAttempt = new Promise((resolve) => {
      // Referenced while it lasts: a caller awaiting the first attempt is a
      // pending wait, and the unreferenced socket alone would let the process
      // exit in the middle of it.
      const timer = setTimeout(resolve, CONNECT_TIMEOUT_MS);
      const settle = () => {
        clearTimeout(timer);
        resolve();
      };
      this.#socket.once("connect", settle);
      this.#socket.once("connect_error", settle);
    });
    this.#socket.on("connect", () => {
      this.#epoch += 1;
      // Whatever was pushed while disconnected is lost: every waiter looks again.
      this.#wakeAll();
    });
    this.#socket.on("disconnect", () => this.#wakeAll());
    // The server's link to its other nodes was down: decisions made there may not have been pushed.
    this.#socket.on("resync", () => {
      this.#epoch += 1;
      this.#wakeAll();
    });
    this.#socket.on("decision", (pushed: PushedDecision) => this.#deliver(pushed));
  }

  /** The current connection's epoch, or null when not connected (the caller long-polls). */
  async epoch(): Promise<number | null> {
    await this.#firstAttempt;
    return this.#socket.connected ? this.#epoch : null;
  }

  /**
   * The pushed decision of `approvalId`, or null after `timeoutMs`, or as soon
   * as the connection drops or comes back (the caller then asks the server).
   */
  next(approvalId: string, timeoutMs: number): Promise<PushedDecision | null> {
    const early = this.#recent.get(approvalId);
    if (early) return Promise.resolve(early);
    return new Promise((resolve) => {
      const waiters = this.#waiters.get(approvalId) ?? new Set();
      this.#waiters.set(approvalId, waiters);
      const done = (pushed: PushedDecision | null) => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0) this.#waiters.delete(approvalId);
        resolve(pushed);
      };
      // Referenced: a pending wait keeps the process alive, the socket does not.
      const timer = setTimeout(() => done(null), timeoutMs);
      waiters.add(done);
    });
  }

  /** Forgets a decision once its waiter has it. */
  settled(approvalId: string): void {
    this.#recent.delete(approvalId);
  }

  close(): void {
    this.#socket.close();
    this.#wakeAll();
  }

  #deliver(pushed: PushedDecision): void {
    if (pushed.status === "PENDING") return;
    const waiters = this.#waiters.get(pushed.approvalId);
    if (waiters) {
      for (const waiter of [...waiters]) waiter(pushed);
      return;
    }
    this.#recent.set(pushed.approvalId, pushed);
    if (this.#recent.size > RECENT_LIMIT) this.#recent.delete(this.#recent.keys().next().value!);
  }

  #wakeAll(): void {
    for (const waiters of [...this.#waiters.values()]) for (const waiter of [...waiters]) waiter(null);
  }
}
