// Every few seconds, analyzes the tables that changed enough since their last
// ANALYZE (server/services/planner-statistics.ts): on the embedded database,
// which has no autovacuum, and on a PostgreSQL server whose autovacuum is off
// or behind; where autovacuum keeps up it finds nothing to do.
import { log } from "../log.ts";
import type { PrismaClient } from "../db/client.ts";
import { analyzeChangedTables } from "../services/planner-statistics.ts";

export class StatisticsKeeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly prisma: PrismaClient,
    private readonly everyMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.analyzeNow(), this.everyMs);
    this.timer.unref();
  }

  /** One round at a time; a failure is logged and the next round tries again. */
  analyzeNow(): Promise<unknown> {
    this.running = this.running.then(() => analyzeChangedTables(this.prisma).catch((error) => log.error("analyzing the changed tables failed", error)));
    return this.running;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
