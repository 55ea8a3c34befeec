// The checked-in migrations and prisma/schema.prisma must describe the same
// database, and applying them must work (and be a no-op the second time). How
// a migration interrupted or failed is met at the next start, and that a schema
// change shows up as a pending migration, are test/long/migrations-recovery.test.ts's.
import { PrismaPGlite } from "pglite-prisma-adapter";
import { describe, expect, it } from "vitest";
import pg from "pg";
import { postgresForMigrations } from "../server/db/client.ts";
import { applyMigrations, diffMigrationsToSchema, readMigrations } from "../server/db/schema-engine.ts";
import { createEmptyPostgresDatabase, TEST_TARGET } from "./harness.ts";
import { emptyEmbedded } from "./templates.ts";

describe("migrations", () => {
  // Diffs on an in-memory shadow database whatever the target: the embedded pass runs it.
  it.skipIf(TEST_TARGET === "postgres")("migrations: schema.prisma and prisma/migrations agree", async () => {
    const shadow = await emptyEmbedded();
    try {
      const sql = await diffMigrationsToSchema(new PrismaPGlite(shadow));
      expect(sql, "run `npm run db:migration -- <name>` to write the missing migration").toBe("");
    } finally {
      await shadow.close();
    }
  });

  it(`migrations: apply to an empty ${TEST_TARGET} database, then apply again as a no-op`, async () => {
    const names = (await readMigrations()).migrationDirectories.map((dir) => dir.path);
    if (TEST_TARGET === "postgres") {
      const database = await createEmptyPostgresDatabase();
      try {
        expect(await applyMigrations(postgresForMigrations(database.url))).toEqual(names);
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        // The engine's migration lock went with its connection: another node may migrate at once.
        const held = await client.query(`SELECT count(*)::int AS held FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`);
        expect(held.rows[0].held).toBe(0);
        expect(await applyMigrations(postgresForMigrations(database.url))).toEqual([]);
        // A migration with a function body (the audit log's append-only trigger) arrived whole.
        const triggers = await client.query(`SELECT tgname FROM pg_trigger WHERE tgname = 'audit_entry_append_only'`);
        await client.end();
        expect(triggers.rows).toHaveLength(1);
      } finally {
        await database.drop();
      }
      return;
    }
    const pglite = await emptyEmbedded();
    try {
      expect(await applyMigrations(new PrismaPGlite(pglite))).toEqual(names);
      expect(await applyMigrations(new PrismaPGlite(pglite))).toEqual([]);
      const recorded = await pglite.query<{ migration_name: string }>(
        "SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL ORDER BY migration_name",
      );
      expect(recorded.rows.map((row) => row.migration_name)).toEqual(names);
    } finally {
      await pglite.close();
    }
  });
});
