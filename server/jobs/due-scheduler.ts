// Runs work that falls due at a time kept in the database (approval expiries,
// escalations, reminders). A restarted server picks the schedule up again; the
// timer is only armed for the earliest due time and re-armed when a sooner one
// is announced. Each piece of work is a conditional write, so when several
// nodes run the same schedule, each piece happens once.
import type { ServiceDeps } from "../services/deps.ts";
import { log } from "../log.ts";

// Re-check at least this often, so work scheduled on other nodes is seen.
const MAX_SLEEP_MS = 5_000;

export interface DueWork {
  /** Does what is due now; returns how many were done (0: nothing left). */
  runDue(): Promise<number>;
  /** When the next piece falls due, if any. */
  nextDue(): Promise<Date | null>;
  /** Subscribes to news of sooner work; calls `arm` with its time. Returns the unsubscribe. */
  listen?(arm: (at: number) => void): () => void;
}

export class DueScheduler {
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Number.POSITIVE_INFINITY;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly name: string,
    _deps: ServiceDeps,
    private readonly work: DueWork,
  ) {
    this.unsubscribe = work.listen?.((at) => {
      if (at < this.armedFor) this.arm(at);
    }) ?? (() => undefined);
  }

  start(): void {
    this.arm(Date.now());
  }

  private arm(at: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    const wakeAt = Math.min(at, Date.now() + MAX_SLEEP_MS);
    this.armedFor = wakeAt;
    this.timer = setTimeout(() => void this.sweep(), Math.max(wakeAt - Date.now(), 0));
  }

  private async sweep(): Promise<void> {
    if (this.running) return this.running;
    this.running = (async () => {
      try {
        while ((await this.work.runDue()) > 0 && !this.stopped);
        const next = await this.work.nextDue();
        this.armedFor = Number.POSITIVE_INFINITY;
        this.arm(next ? next.getTime() : Date.now() + MAX_SLEEP_MS);
      } catch (error) {
        if (!this.stopped) log.error(`${this.name} failed; retrying`, error);
        this.arm(Date.now() + 1_000);
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    clearTimeout(this.timer);
    await this.running;
  }
}
