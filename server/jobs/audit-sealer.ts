// Seals the audit chain heads at start, every few minutes (when they moved)
// and once more at shutdown, so the digests outside the database stay close behind.
import { log } from "../log.ts";
import { sealAuditLogs, type DigestSink } from "../services/audit-seal.ts";
import type { ServiceDeps } from "../services/deps.ts";

export class AuditSealer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly deps: ServiceDeps,
    private readonly sink: DigestSink,
    private readonly everyMs: number,
  ) {}

  /** Seals at once (what a crash left unsealed), then every interval. */
  start(): void {
    if (!this.sink.file && !this.sink.url) return;
    void this.sealNow();
    this.timer = setInterval(() => void this.sealNow(), this.everyMs);
    this.timer.unref();
  }

  /** One seal at a time; a failure is logged and the next round tries again. */
  sealNow(): Promise<unknown> {
    this.running = this.running.then(() => sealAuditLogs(this.deps, this.sink).catch((error) => log.error("sealing the audit log failed", error)));
    return this.running;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    if (this.sink.file || this.sink.url) await this.sealNow();
  }
}
