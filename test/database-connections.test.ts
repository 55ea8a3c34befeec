// PostgreSQL ending the server's idle connections (a restart, a failover, an
// administrator, the database dropped as a test ends) is logged and survived:
// the pool opens new connections, and nothing is thrown at the process, even
// while the database closes and Prisma's client has already let the pool go.
import { afterEach, describe, expect, it, vi } from "vitest";
import { openDatabase, type Database } from "../server/db/client.ts";
import { Prisma } from "../server/db/generated/client.ts";
import { log } from "../server/log.ts";
import { queryOnce } from "./databases.ts";
import { createEmptyPostgresDatabase } from "./harness.ts";
import { describeWith, needsPostgres } from "./requires.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openOnNewDatabase(): Promise<{ database: Database; url: string }> {
  const throwaway = await createEmptyPostgresDatabase();
  cleanups.push(throwaway.drop);
  const database = await openDatabase({ databaseUrl: throwaway.url, dataDir: "unused", embeddedCacheMb: 8, migrate: false });
  return { database, url: throwaway.url };
}

/** Ends every other connection to the database, as PostgreSQL does on a restart or a DROP DATABASE ... WITH (FORCE). */
async function endConnections(url: string): Promise<number> {
  const rows = await queryOnce<{ ended: boolean }>(
    url,
    "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
  );
  return rows.filter((row) => row.ended).length;
}

/** Resolves with the message the pool's error is logged with, at `level`. */
function nextLogged(level: "warn" | "debug"): Promise<string> {
  return new Promise((resolve) => vi.spyOn(log, level).mockImplementation((message) => resolve(message)));
}

describeWith(needsPostgres())("the database server ends the server's connections", () => {
  it("an idle connection ended is logged, and the next statements, Prisma's and direct, open new ones", async () => {
    const { database, url } = await openOnNewDatabase();
    cleanups.push(() => database.close());
    await database.prisma.$queryRaw`SELECT 1`;
    await database.sql.query(Prisma.sql`SELECT 1 AS one`);

    const logged = nextLogged("warn");
    expect(await endConnections(url)).toBeGreaterThan(0);
    expect(await logged).toMatch(/ended an idle connection/);

    expect(await database.prisma.$queryRaw`SELECT 2 AS two`).toEqual([{ two: 2 }]);
    expect(await database.sql.query(Prisma.sql`SELECT 3 AS three`)).toEqual([{ three: 3 }]);
  });

  it("a connection ended while the database closes, after Prisma's client let the pool go, is not thrown at the process", async () => {
    const { database, url } = await openOnNewDatabase();
    await database.sql.query(Prisma.sql`SELECT 1 AS one`);
    // The moment between Prisma's client letting go and the pool ending.
    const disconnect = database.prisma.$disconnect.bind(database.prisma);
    const logged = nextLogged("debug");
    vi.spyOn(database.prisma, "$disconnect").mockImplementation(async () => {
      await disconnect();
      await database.sql.close();
      expect(await endConnections(url)).toBeGreaterThan(0);
      await logged;
    });
    await database.close();
    expect(await logged).toMatch(/ended as the server closed/);
  });
});
