// Agents long-polling for a decision wait here: one bus subscription wakes
// exactly the waiters of the decided approval, with no database polling.
import type { EventBus } from "./bus.ts";

export interface Wait {
  /** Resolves on the decision, the timeout or the abort signal, whichever is first. */
  promise: Promise<"decided" | "timeout" | "aborted">;
  cancel(): void;
}

export class DecisionWaiters {
  private readonly waiting = new Map<string, Set<(reason: "decided") => void>>();

  constructor(bus: EventBus) {
    bus.on("approval:decided", ({ approvalId }) => {
      const wakers = this.waiting.get(approvalId);
      if (!wakers) return;
      this.waiting.delete(approvalId);
      for (const wake of wakers) wake("decided");
    });
  }

  get size(): number {
    let count = 0;
    for (const set of this.waiting.values()) count += set.size;
    return count;
  }

  wait(approvalId: string, timeoutMs: number, signal?: AbortSignal): Wait {
    let settle!: (reason: "decided" | "timeout" | "aborted") => void;
    const promise = new Promise<"decided" | "timeout" | "aborted">((resolve) => (settle = resolve));
    const timer = setTimeout(() => done("timeout"), timeoutMs);
    const onAbort = () => done("aborted");
    const wakers = this.waiting.get(approvalId) ?? new Set();
    this.waiting.set(approvalId, wakers);
    const waker = (reason: "decided") => done(reason);
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
    function done(reason: "decided" | "timeout" | "aborted") {
      cleanup();
      settle(reason);
    }
    return { promise, cancel: () => done("aborted") };
  }
}
