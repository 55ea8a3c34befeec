// Suites that need what a run may not have: PostgreSQL (the PostgreSQL pass,
// TOLLGATE_TEST_TARGET=postgres), the embedded database (the embedded pass),
// or a Redis server. A skipped suite says why in the output, never silently;
// with TOLLGATE_TEST_REQUIRE_SERVICES=1 (as CI runs) a missing service fails
// the file instead of skipping it.
import { createClient } from "redis";
import { describe } from "vitest";
import { TEST_TARGET } from "./harness.ts";

/** The Redis server the suites that need one use. */
export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** Whether a Redis server answers at `url` (within a second, without retrying). */
export async function redisAnswers(url = REDIS_URL): Promise<boolean> {
  const client = createClient({ url, socket: { reconnectStrategy: false, connectTimeout: 1000 } });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.ping();
    await client.quit();
    return true;
  } catch {
    return false;
  }
}

/** Why a suite cannot run here, or nothing when it can. */
export type Missing = { reason: string; service: boolean } | undefined;

export const needsPostgres = (): Missing =>
  TEST_TARGET === "postgres" ? undefined : { reason: "runs in the PostgreSQL pass (TOLLGATE_TEST_TARGET=postgres with TEST_DATABASE_URL)", service: false };

export const needsEmbedded = (): Missing =>
  TEST_TARGET === "embedded" ? undefined : { reason: "runs in the embedded database's pass only", service: false };

export const needsRedis = (available: boolean, url: string): Missing =>
  available ? undefined : { reason: `needs a Redis server at ${url} (redis-server; TEST_REDIS_URL names another)`, service: true };

/** The first thing missing of several. */
export const firstMissing = (...all: Missing[]): Missing => all.find((missing) => missing !== undefined);

/** `describe` when nothing is missing, else a skipped suite that says why (in its name and in the output). */
export function describeWith(missing: Missing): typeof describe | typeof describe.skip {
  if (!missing) return describe;
  if (missing.service && process.env.TOLLGATE_TEST_REQUIRE_SERVICES === "1") {
    throw new Error(`a suite ${missing.reason}, and TOLLGATE_TEST_REQUIRE_SERVICES=1 says every suite must run`);
  }
  return ((name: string, body: () => void) => {
    console.log(`skipped: "${name}" ${missing.reason}`);
    describe.skip(`${name} (skipped: ${missing.reason})`, body);
  }) as typeof describe.skip;
}

/** Inside a test (given its context's skip): skipped, with the reason as the reporter's note, when something is missing. */
export function skipWithout(skip: (condition: boolean, note?: string) => void, missing: Missing): void {
  if (missing) skip(true, missing.reason);
}
