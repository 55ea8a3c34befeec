// Agents long-polling for a decision wait here: one bus subscription wakes
// exactly the waiters of the decided approval, with no database polling, and
// hands them the decision event itself.
import type { EventBus, TollgateEvents } from "./bus.ts";

export type DecidedEvent = TollgateEvents["approval:decided"];

export type WaitOutcome = { reason: "decided"; event: DecidedEvent } | { reason: "timeout" } | { reason: "aborted" };

export interface Wait {
  /** Resolves on the decision, the timeout or the abort signal, whichever is first. */
  promise: Promise<WaitOutcome>;
  cancel(): void;
}

export class DecisionWaiters {
  private readonly waiting = new Map<string, Set<(event: DecidedEvent) => void>>();

  constructor(bus: EventBus) {
    bus.on("approval:decided", (event) => {
      const wakers = this.waiting.get(event.approvalId);
      if (!wakers) return;
      this.waiting.delete(event.approvalId);
      for (const wake of wakers) wake(event);
    });
  }

  get size(): number {
    let count = 0;
    for (const set of this.waiting.values()) count += set.size;
    return count;
  }

  wait(approvalId: string, timeoutMs: number, signal?: AbortSignal): Wait {
    let settle!: (outcome: WaitOutcome) => void;
    const promise = new Promise<WaitOutcome>((resolve) => (settle = resolve));
    const timer = setTimeout(() => done({ reason: "timeout" }), timeoutMs);
    const onAbort = () => done({ reason: "aborted" });
    const wakers = this.waiting.get(approvalId) ?? new Set();
    this.waiting.set(approvalId, wakers);
    const waker = (event: DecidedEvent) => done({ reason: "decided", event });
    wakers.add(waker);
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) onAbort();

    const cleanup = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      const set = this.waiting.get(approvalId);
      set?.delete(waker);
      if (set && set.size === 0) this.waiting.delete(approvalId);
    };
    function done(outcome: WaitOutcome) {
      cleanup();
      settle(outcome);
    }
    return { promise, cancel: () => done({ reason: "aborted" }) };
  }
}
