// Whether this node should receive traffic: its database answers and has every
// migration this build knows (a node of a newer build waits until they are
// applied), and Redis answers when the deployment uses it. Liveness (/healthz)
// is only "the process answers"; a load balancer routes by readiness (/readyz).
import type { PrismaClient } from "../db/client.ts";

export interface ReadinessCheck {
  ok: boolean;
  detail: string;
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, ReadinessCheck>;
}

export interface ReadinessProbe {
  prisma: PrismaClient;
  /** The newest migration of this build (the last folder of prisma/migrations). */
  latestMigration: string | null;
  /** Answers PONG when Redis is reachable; absent without REDIS_URL. */
  pingRedis?: () => Promise<string>;
  /** True once the node is draining for shutdown. */
  draining: () => boolean;
  timeoutMs?: number;
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const failed = (error: unknown): ReadinessCheck => ({ ok: false, detail: error instanceof Error ? error.message : String(error) });

async function checkDatabase(probe: ReadinessProbe, ms: number): Promise<ReadinessCheck> {
  try {
    const rows = await within(
      probe.prisma.$queryRaw<{ migration_name: string }[]>`
        SELECT migration_name FROM _prisma_migrations
        WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL
        ORDER BY migration_name DESC LIMIT 1`,
      ms,
      "the database",
    );
    const applied = rows[0]?.migration_name ?? null;
    if (probe.latestMigration && (!applied || applied < probe.latestMigration)) {
      return { ok: false, detail: `migration ${probe.latestMigration} is not applied yet (newest applied: ${applied ?? "none"})` };
    }
    return { ok: true, detail: `reachable; migrations applied up to ${applied ?? "none"}` };
  } catch (error) {
    return failed(error);
  }
}

export async function checkReadiness(probe: ReadinessProbe): Promise<Readiness> {
  const ms = probe.timeoutMs ?? 2_000;
  const checks: Record<string, ReadinessCheck> = { database: await checkDatabase(probe, ms) };
  if (probe.pingRedis) {
    checks.redis = await within(probe.pingRedis(), ms, "Redis").then(
      (answer) => (answer === "PONG" ? { ok: true, detail: "reachable" } : { ok: false, detail: `answered ${answer}` }),
      failed,
    );
  }
  if (probe.draining()) checks.draining = { ok: false, detail: "shutting down: send new traffic to another node" };
  return { ready: Object.values(checks).every((check) => check.ok), checks };
}
