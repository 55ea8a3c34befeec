// A loop of delivery rounds: woken by news of new work, otherwise asleep until
// the next retry falls due. One round runs at a time; news that arrives during
// a round runs another right after it.
import { log } from "../log.ts";

export class WorkLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private again = false;
  private stopped = false;

  /** `round` does what is due and returns how long to sleep before the next round. */
  constructor(
    private readonly name: string,
    private readonly round: () => Promise<number>,
    private readonly retryAfterErrorMs = 2_000,
  ) {}

  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.round()
      .catch((error) => {
        log.error(`${this.name} round failed`, error);
        return this.retryAfterErrorMs;
      })
      .then((sleepMs) => {
        this.running = undefined;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          this.wake();
        } else {
          this.timer = setTimeout(() => this.wake(), sleepMs);
        }
      });
  }

  /** Waits for the round in progress; no new round starts. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
