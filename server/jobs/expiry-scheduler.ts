// Ends approvals whose timeout has passed. The schedule lives in the database
// (expiresAt), so a restarted server picks it up; the timer is only armed for
// the earliest expiry and re-armed when a sooner one is requested.
import { expireDueApprovals, nextExpiry } from "../services/approvals/expire-approvals.ts";
import type { ServiceDeps } from "../services/deps.ts";
import { log } from "../log.ts";

// Re-check at least this often, so expiries requested on other nodes are seen.
const MAX_SLEEP_MS = 5_000;

export class ExpiryScheduler {
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Number.POSITIVE_INFINITY;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly unsubscribe: () => void;

  constructor(private readonly deps: ServiceDeps) {
    this.unsubscribe = deps.bus.on("approval:requested", ({ expiresAt }) => {
      if (expiresAt && Date.parse(expiresAt) < this.armedFor) this.arm(Date.parse(expiresAt));
    });
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
        while ((await expireDueApprovals(this.deps)) > 0 && !this.stopped);
        const next = await nextExpiry(this.deps);
        this.armedFor = Number.POSITIVE_INFINITY;
        this.arm(next ? next.getTime() : Date.now() + MAX_SLEEP_MS);
      } catch (error) {
        if (!this.stopped) log.error("expiring approvals failed; retrying", error);
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
