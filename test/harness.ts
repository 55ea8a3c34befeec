// Integration-test databases: every test file gets its own migrated database
// (an in-memory PGlite, or a PostgreSQL database when TOLLGATE_TEST_TARGET is
// "postgres", each a copy of the run's template: templates.ts), and every test
// starts from an empty, freshly bootstrapped one.
import type { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import pg from "pg";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { directStatements, postgresPool } from "../server/db/client.ts";
import { PrismaClient } from "../server/db/generated/client.ts";
import { timedAdapterFactory } from "../server/db/timed-adapter.ts";
import type { DirectSql } from "../server/db/direct-sql.ts";
import { EventBus } from "../server/events/bus.ts";
import { bootstrapWorkspace } from "../server/services/bootstrap.ts";
import { createServiceDeps, type ServiceDeps } from "../server/services/deps.ts";
import { appRouter } from "../server/api/router.ts";
import { createCallerFactory, type TrpcContext } from "../server/api/trpc.ts";
import { createEmptyPostgresDatabase as createThrowawayDatabase, type ThrowawayDatabase } from "./databases.ts";
import { embeddedFromTemplate, postgresTemplate } from "./templates.ts";

export const TEST_TARGET = process.env.TOLLGATE_TEST_TARGET === "postgres" ? "postgres" : "embedded";
export const ADMIN = { email: "admin@example.com", password: "correct horse battery" };
export const AGENT_KEY = "tgk_test_agent_key_0123456789";

export interface TestDatabase {
  prisma: PrismaClient;
  /** The direct statements, over the same adapter as `prisma` (counted alike). */
  sql: DirectSql;
  /** How many statements (queries and commands, not BEGIN or COMMIT) `work` sent to the database. */
  countStatements<T>(work: () => Promise<T>): Promise<{ result: T; statements: number }>;
  /** A postgres:// URL for servers started by the test (PostgreSQL target only). */
  url?: string;
  close(): Promise<void>;
}

function testDatabaseAdminUrl(): string {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) throw new Error("TOLLGATE_TEST_TARGET=postgres needs TEST_DATABASE_URL");
  return adminUrl;
}

/** Creates an empty PostgreSQL database for the PostgreSQL run; returns its URL and how to drop it. */
export function createEmptyPostgresDatabase(): Promise<ThrowawayDatabase> {
  return createThrowawayDatabase(testDatabaseAdminUrl());
}

/** Creates a PostgreSQL database holding every migration (a copy of the run's template; see templates.ts). */
export async function createMigratedPostgresDatabase(): Promise<ThrowawayDatabase> {
  const adminUrl = testDatabaseAdminUrl();
  return createThrowawayDatabase(adminUrl, "tollgate_test", await postgresTemplate(adminUrl));
}

/**
 * A Prisma client and the direct statements (over an adapter of their own,
 * which prepares them, as the server's), whose statements can be counted (see
 * TestDatabase.countStatements).
 */
function countingClient(adapter: PrismaPg | PrismaPGlite, directDriver: pg.Pool | PGlite) {
  let counted: { statements: number } | undefined;
  const listener = () => {
    const counter = counted;
    return counter ? () => void counter.statements++ : undefined;
  };
  const timed = timedAdapterFactory(adapter, listener);
  const prisma = new PrismaClient({ adapter: timed });
  const sql = directStatements(directDriver, listener);
  const countStatements = async <T>(work: () => Promise<T>) => {
    counted = { statements: 0 };
    try {
      const result = await work();
      return { result, statements: counted.statements };
    } finally {
      counted = undefined;
    }
  };
  return { prisma, sql, countStatements };
}

/** A new, migrated database for one test file. */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (TEST_TARGET === "postgres") {
    const database = await createMigratedPostgresDatabase();
    const url = new URL(database.url);
    // One pool for Prisma's client and the direct statements, as the server has.
    let closing = false;
    const pool = postgresPool(url.toString(), () => closing);
    const { prisma, sql, countStatements } = countingClient(new PrismaPg(pool), pool);
    return {
      prisma,
      sql,
      countStatements,
      url: url.toString(),
      async close() {
        closing = true;
        await prisma.$disconnect();
        await sql.close();
        await pool.end();
        await database.drop();
      },
    };
  }
  const pglite = await embeddedFromTemplate();
  const { prisma, sql, countStatements } = countingClient(new PrismaPGlite(pglite), pglite);
  return {
    prisma,
    sql,
    countStatements,
    async close() {
      await prisma.$disconnect();
      await sql.close();
      await pglite.close();
    },
  };
}

/**
 * Empties every table, as if the database were new. DELETE with the triggers
 * off (session_replication_role: the audit log's append-only trigger and the
 * foreign keys' checks stand aside) rather than TRUNCATE: a test leaves a few
 * rows, and PostgreSQL's TRUNCATE of the 24 tables took 300 ms a test
 * replacing their files, where this takes a few.
 */
export async function resetDatabase(prisma: PrismaClient): Promise<void> {
  const relations = await prisma.$queryRaw<{ kind: "table" | "sequence"; name: string }[]>`
    SELECT 'table' AS kind, tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'
    UNION ALL SELECT 'sequence', sequencename FROM pg_sequences WHERE schemaname = 'public'`;
  if (!relations.some((relation) => relation.kind === "table")) return;
  const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;
  const emptying = relations.map(({ kind, name }) => (kind === "table" ? `DELETE FROM ${quoted(name)};` : `ALTER SEQUENCE ${quoted(name)} RESTART;`));
  await prisma.$executeRawUnsafe(`DO $reset$ BEGIN
    PERFORM set_config('session_replication_role', 'replica', true);
    ${emptying.join("\n    ")}
  END $reset$`);
}

export interface TestApp {
  deps: ServiceDeps;
  workspaceId: string;
  bus: EventBus;
}

/** Resets the database and bootstraps a workspace with a known admin and agent key. */
export async function freshApp(db: TestDatabase): Promise<TestApp> {
  await resetDatabase(db.prisma);
  const bus = new EventBus();
  const deps = createServiceDeps(db, bus);
  // As a server does at start: decisions sign inside their transaction, where
  // the embedded database could not also create the first key.
  await deps.receipts.ready();
  const result = await bootstrapWorkspace(deps, {
    workspaceName: "Test workspace",
    adminEmail: ADMIN.email,
    adminPassword: ADMIN.password,
    agentKey: AGENT_KEY,
  });
  return { deps, workspaceId: result.workspaceId, bus };
}

const createCaller = createCallerFactory(appRouter);

/** A tRPC caller as an agent (bearer agent key) or with an operator token. */
export function callerWith(deps: ServiceDeps, context: Partial<TrpcContext> = {}) {
  return createCaller({ deps, ...context });
}

export const agentCaller = (deps: ServiceDeps, key = AGENT_KEY) => callerWith(deps, { bearerToken: key });

/** Logs in through the API and returns a caller carrying that operator's session. */
export async function operatorCaller(deps: ServiceDeps, credentials = ADMIN) {
  let token: string | undefined;
  await callerWith(deps, { setSessionCookie: (value) => (token = value ?? undefined) }).auth.login(credentials);
  if (!token) throw new Error("login set no session cookie");
  return callerWith(deps, { sessionToken: token });
}

/** Adds a person as an admin does: invited by `admin` (operator.create), accepted by them with `password`. */
export async function addPersonWith(
  deps: ServiceDeps,
  admin: Awaited<ReturnType<typeof operatorCaller>>,
  person: { email: string; name: string; role: "ADMIN" | "OPERATOR" | "VIEWER"; password: string },
) {
  const { link } = await admin.operator.create({ email: person.email, name: person.name, role: person.role });
  if (!link) throw new Error("the invitation came back without a link (it was emailed)");
  const accepted = await callerWith(deps).auth.acceptInvitation({ token: link.slice(link.indexOf("#") + 1), password: person.password });
  return { id: accepted.operator.id };
}

/**
 * Registers the usual hooks: one database for the file, a fresh bootstrapped
 * app for every test. The callbacks hand them to the test file's variables.
 */
export function useFreshApp(onDatabase: (db: TestDatabase) => void, onApp: (app: TestApp) => void): void {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    onDatabase(db);
  });
  afterAll(async () => {
    await db?.close();
  });
  beforeEach(async () => {
    onApp(await freshApp(db));
  });
}
