// The database's logic as source (server/db/sql/): loaded into an empty
// database beside prisma/schema.prisma's tables, the files give the same
// functions, triggers and types as the migrations give another; and the
// migration db:migration writes from a changed file takes a migrated
// database to what the files say.
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import { PrismaPGlite } from "pglite-prisma-adapter";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { schemaSql } from "../server/db/schema-engine.ts";
import { catalogDifferences, loadSqlSource, migrationBetween, readCatalog, readSqlSource, type Query, type SqlSourceFile } from "../server/db/sql-source.ts";
import { createEmptyPostgresDatabase, createMigratedPostgresDatabase, TEST_TARGET } from "./harness.ts";
import { embeddedFromTemplate, emptyEmbedded } from "./templates.ts";

interface Scratch {
  query: Query;
  /** A factory for the schema engine, which writes the tables' SQL. */
  engine: () => SqlMigrationAwareDriverAdapterFactory;
  close(): Promise<void>;
}

const closing: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closing.splice(0)) await close();
});

async function pgliteScratch(database: PGlite): Promise<Scratch> {
  const scratch = {
    query: (async (sql: string) => (await database.exec(sql)).at(-1)?.rows ?? []) as Query,
    engine: () => new PrismaPGlite(database),
    close: () => database.close(),
  };
  closing.push(scratch.close);
  return scratch;
}

async function postgresScratch(migrated: boolean): Promise<Scratch> {
  const database = migrated ? await createMigratedPostgresDatabase() : await createEmptyPostgresDatabase();
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const scratch = {
    query: (async (sql: string) => {
      const result = (await client.query(sql)) as pg.QueryResult | pg.QueryResult[];
      return (Array.isArray(result) ? result.at(-1)! : result).rows;
    }) as Query,
    engine: () => new PrismaPg({ connectionString: database.url }),
    close: async () => {
      await client.end();
      await database.drop();
    },
  };
  closing.push(scratch.close);
  return scratch;
}

const migratedDatabase = () => (TEST_TARGET === "postgres" ? postgresScratch(true) : embeddedFromTemplate().then(pgliteScratch));

/** An empty database with prisma/schema.prisma's tables and the files' functions, triggers and types. */
async function fromSource(files: SqlSourceFile[]): Promise<Scratch> {
  const scratch = TEST_TARGET === "postgres" ? await postgresScratch(false) : await pgliteScratch(await emptyEmbedded());
  await scratch.query(await schemaSql(scratch.engine()));
  await loadSqlSource(scratch.query, files);
  return scratch;
}

// Each test builds two databases and runs the schema engine: longer than the usual test.
describe(`SQL source (${TEST_TARGET})`, { timeout: 180_000 }, () => {
  it("sql source: the files in an empty database give the functions, triggers and types the migrations give", async () => {
    const [migrated, source] = await Promise.all([migratedDatabase(), readSqlSource().then(fromSource)]);
    const expected = await readCatalog(migrated.query);
    expect(expected.functions.size).toBeGreaterThan(20);
    expect(expected.triggers.size).toBeGreaterThan(0);
    // A difference names the file to change: server/db/sql/README.md says how.
    expect(catalogDifferences(expected, await readCatalog(source.query))).toEqual([]);
  });

  it("sql source: a changed signature and a renamed trigger function are written as DROP and CREATE with their triggers, and the migration gives what the files say", async () => {
    const files = (await readSqlSource()).map((file) => {
      if (file.name === "tollgate_lock_audit_head.sql") {
        // One more argument: a new signature, so the old function goes.
        return { ...file, text: file.text.replace(/tollgate_lock_audit_head\(p_workspace_id text\)/, "tollgate_lock_audit_head(p_workspace_id text, p_reason text DEFAULT NULL)") };
      }
      if (file.name === "audit_entry_append_only.sql") {
        return { name: "audit_entry_never_changed.sql", text: file.text.replaceAll(/"?audit_entry_append_only"?\(\)/g, "audit_entry_never_changed()") };
      }
      return file;
    });
    expect(files.find((file) => file.name === "tollgate_lock_audit_head.sql")!.text).toContain("p_reason text");
    const [migrated, source] = await Promise.all([migratedDatabase(), fromSource(files)]);
    const target = await readCatalog(source.query);
    const migration = migrationBetween(await readCatalog(migrated.query), target);
    expect(migration).toContain("DROP FUNCTION tollgate_lock_audit_head(text);");
    expect(migration).toContain("DROP FUNCTION audit_entry_append_only();");
    expect(migration).toMatch(/DROP TRIGGER audit_entry_append_only ON "AuditEntry";[\s\S]*CREATE TRIGGER audit_entry_append_only [^;]*audit_entry_never_changed\(\);/);
    await migrated.query(migration);
    expect(catalogDifferences(target, await readCatalog(migrated.query))).toEqual([]);
    expect(migrationBetween(await readCatalog(migrated.query), target)).toBe("");
  });
});
