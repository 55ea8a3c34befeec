// Opens the one database of this process: PGlite in a folder when no
// DATABASE_URL is given, else a PostgreSQL server. Migrations are applied here.
import { mkdir } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import { PrismaPGlite } from "pglite-prisma-adapter";
import pg from "pg";
import { PrismaClient } from "./generated/client.ts";
import { createEmbeddedDatabase } from "./embedded-folder.ts";
import { applyMigrations } from "./schema-engine.ts";
import { withPreparedStatements } from "./prepared-statements.ts";
import { directSqlOnPool } from "./direct-sql-pool.ts";
import { timedAdapterFactory, type StatementListener } from "./timed-adapter.ts";
import { directSql, type DirectSql } from "./direct-sql.ts";
import { DatabaseThread } from "./database-thread/database-thread.ts";
import { log } from "../log.ts";

export type { PrismaClient };
export type DatabaseTarget = "embedded" | "postgres";

export interface Database {
  prisma: PrismaClient;
  /** The hot path's statements, over Prisma's own connections (direct-sql.ts). */
  sql: DirectSql;
  target: DatabaseTarget;
  /** Where the data lives: the folder (embedded, and whether on a thread of its own) or the URL without its password. */
  location: string;
  adapterFactory: SqlMigrationAwareDriverAdapterFactory;
  /** The factory to apply migrations with (see postgresForMigrations). */
  migrationFactory: SqlMigrationAwareDriverAdapterFactory;
  /** The migrations this open applied (none when the database was up to date). */
  appliedMigrations: string[];
  /** Hears the duration of every statement the application sends (the metrics listen). */
  onStatement(listener: StatementListener): void;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  /** Folder for the embedded database; "memory://" keeps it in memory. */
  dataDir: string;
  migrate?: boolean;
  /** The embedded database's page cache (its shared_buffers) in MB; PostgreSQL's own default is 128. */
  embeddedCacheMb: number;
  /** Where the embedded database runs: on the server's main thread, or on a thread of its own (database-thread/). */
  embeddedThread?: "main" | "worker";
}

function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparsable URL)";
  }
}

/**
 * The factory for applying migrations to PostgreSQL: @prisma/adapter-pg runs a
 * script by splitting it at every ";", which cuts a function body (a trigger's
 * plpgsql) apart, so each migration file is sent whole instead, as one simple
 * query on its own connection.
 */
export function postgresForMigrations(databaseUrl: string, factory = new PrismaPg({ connectionString: databaseUrl })): SqlMigrationAwareDriverAdapterFactory {
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    async connect() {
      const adapter = await factory.connect();
      adapter.executeScript = async (script: string) => {
        const client = new pg.Client({ connectionString: databaseUrl });
        await client.connect();
        try {
          await client.query(script);
        } finally {
          await client.end();
        }
      };
      return adapter;
    },
    connectToShadowDb: () => factory.connectToShadowDb(),
  };
}

/**
 * The embedded database's statistics target (PostgreSQL's default is 100). An
 * ANALYZE reads a sample of 300 rows per unit of it, in memory that PGlite's
 * WebAssembly memory keeps once touched: at 100 a server's memory grew by
 * about 20 MB per 10,000 approvals until its tables held 30,000 rows. Ten
 * still gives every enum column all its values as common ones; the engine's
 * statements find rows by key whatever the statistics say.
 */
export const EMBEDDED_STATISTICS_TARGET = 10;

/** PGlite's own start parameters, with the page cache (shared_buffers) and the statistics target set. */
export function pgliteOptions(cacheMb: number): { startParams: string[] } {
  return {
    startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${cacheMb}MB`, "-c", `default_statistics_target=${EMBEDDED_STATISTICS_TARGET}`],
  };
}

/**
 * The server's pool of PostgreSQL connections. An idle connection the server
 * ends (a restart, a failover, an administrator, a dropped database) is an
 * 'error' on the pool, which crashes the process when nobody listens: Prisma's
 * adapter listens only while its client is connected, and the pool's end()
 * resolves before its connections have closed. The pool drops the connection
 * and opens another when one is needed; while `closing()` says the database is
 * being closed, the ending is expected and logged at debug level.
 */
export function postgresPool(databaseUrl: string, closing: () => boolean): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  pool.on("error", (error) => {
    if (closing()) log.debug("a database connection ended as the server closed", error);
    else log.warn("the database server ended an idle connection; a new one is opened when needed", error);
  });
  return pool;
}

/**
 * The direct statements (direct-sql.ts) over the server's pool or PGlite
 * instance: a few texts sent over and over, so each is prepared once. On
 * PostgreSQL they go to `pg` itself (direct-sql-pool.ts); on PGlite through
 * Prisma's adapter, whose cost there is small beside PGlite's own
 * (prepared-statements.ts).
 */
export function directStatements(driver: pg.Pool | PGlite | DatabaseThread, listener: () => StatementListener | undefined): DirectSql {
  if (driver instanceof pg.Pool) return directSqlOnPool(driver, listener);
  const factory = driver instanceof DatabaseThread ? driver.factory("direct") : new PrismaPGlite(withPreparedStatements(driver));
  return directSql(timedAdapterFactory(factory, listener));
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  let adapterFactory: SqlMigrationAwareDriverAdapterFactory;
  let directDriver: pg.Pool | PGlite | DatabaseThread;
  let migrationFactory: SqlMigrationAwareDriverAdapterFactory;
  let closeDriver: () => Promise<void>;
  let target: DatabaseTarget;
  let location: string;
  let closing = false;

  if (options.databaseUrl) {
    // One pool for Prisma's client and the direct statements. Migrations get
    // connections of their own: the schema engine's advisory lock is let go
    // only when its connection closes, which a shared pool's never does.
    const pool = postgresPool(options.databaseUrl, () => closing);
    adapterFactory = new PrismaPg(pool);
    directDriver = pool;
    migrationFactory = postgresForMigrations(options.databaseUrl);
    closeDriver = () => pool.end();
    target = "postgres";
    location = redactUrl(options.databaseUrl);
  } else {
    const { startParams } = pgliteOptions(options.embeddedCacheMb);
    if (!options.dataDir.startsWith("memory://")) {
      await mkdir(options.dataDir, { recursive: true });
      await createEmbeddedDatabase(options.dataDir, startParams);
    }
    if (options.embeddedThread === "worker") {
      const thread = await DatabaseThread.open({ dataDir: options.dataDir, startParams });
      adapterFactory = thread.factory("prisma");
      directDriver = thread;
      closeDriver = () => thread.close();
      location = `${options.dataDir}, on a thread of its own`;
    } else {
      const pglite = await PGlite.create(options.dataDir, { startParams });
      adapterFactory = new PrismaPGlite(pglite);
      directDriver = pglite;
      closeDriver = () => pglite.close();
      location = options.dataDir;
    }
    migrationFactory = adapterFactory;
    target = "embedded";
  }

  const appliedMigrations = options.migrate !== false ? await applyMigrations(migrationFactory) : [];
  if (appliedMigrations.length > 0) log.info(`applied ${appliedMigrations.length} migrations, the last ${appliedMigrations.at(-1)}`);

  let statementListener: StatementListener | undefined;
  const timedFactory = timedAdapterFactory(adapterFactory, () => statementListener);
  const prisma = new PrismaClient({ adapter: timedFactory });
  const sql = directStatements(directDriver, () => statementListener);
  return {
    prisma,
    sql,
    appliedMigrations,
    onStatement(listener) {
      statementListener = listener;
    },
    target,
    location,
    adapterFactory,
    migrationFactory,
    async close() {
      closing = true;
      // The driver closes even if letting a client go fails.
      try {
        await prisma.$disconnect();
        await sql.close();
      } finally {
        await closeDriver();
      }
    },
  };
}
