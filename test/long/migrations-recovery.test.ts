// What the next start makes of a migration a killed process left half done
// (on PostgreSQL and on the embedded database), or one that failed on its own
// SQL; and that a schema change shows up as a pending migration. Slow (each
// migrates a new database from nothing) and guarding code that seldom changes
// (server/db/schema-engine.ts): `npm run test:long` runs them.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cp, mkdtemp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { describe, expect, it } from "vitest";
import { postgresForMigrations } from "../../server/db/client.ts";
import { applyMigrations, diffMigrationsToSchema, MIGRATIONS_DIR } from "../../server/db/schema-engine.ts";
import { queryOnce } from "../databases.ts";
import { createEmptyPostgresDatabase, TEST_TARGET } from "../harness.ts";

describe("migrations", () => {
  it.skipIf(TEST_TARGET === "postgres")("migrations: a schema change shows up as a pending migration", async () => {
    const shadow = await PGlite.create();
    try {
      const schema = await readFile("prisma/schema.prisma", "utf8");
      const changed = schema.replace("model Workspace {", "model Workspace {\n  extraColumn String?");
      const sql = await diffMigrationsToSchema(new PrismaPGlite(shadow), changed);
      expect(sql).toMatch(/ALTER TABLE "Workspace" ADD COLUMN\s+"extraColumn" TEXT/);
    } finally {
      await shadow.close();
    }
  });

  // A migration that waits while the test kills its process. Its wait reads a
  // setting the test turns off afterwards, so the file (and its checksum) stays the same.
  const PROBE = "99999999999999_interrupted_probe";
  const PROBE_SQL = `CREATE TABLE "migration_probe" ("id" INTEGER);
SELECT pg_sleep(COALESCE(NULLIF(current_setting('tollgate.probe_sleep', true), ''), '0')::float);
`;

  async function migrationsWithProbe(): Promise<{ dir: string; remove(): Promise<void> }> {
    const root = await mkdtemp(path.join(tmpdir(), "tollgate-migrations-"));
    const dir = path.join(root, "migrations");
    await cp(MIGRATIONS_DIR, dir, { recursive: true });
    await mkdir(path.join(dir, PROBE));
    await writeFile(path.join(dir, PROBE, "migration.sql"), PROBE_SQL);
    return { dir, remove: () => rm(root, { recursive: true, force: true }) };
  }

  it.skipIf(TEST_TARGET !== "postgres")("migrations: a process killed while it migrates leaves nothing the next start refuses (P3009)", async () => {
    const database = await createEmptyPostgresDatabase();
    const probe = await migrationsWithProbe();
    const name = new URL(database.url).pathname.slice(1);
    try {
      // The backend notices its client is gone, as it would after a crash, and rolls the script back.
      await queryOnce(database.url, `ALTER DATABASE ${name} SET client_connection_check_interval = '100ms'`);
      await queryOnce(database.url, `ALTER DATABASE ${name} SET tollgate.probe_sleep = '600'`);
      const migrator = spawn(process.execPath, ["--import", "tsx", "test/fixtures-apply-migrations.ts", database.url, probe.dir], { stdio: "inherit" });
      const exited = new Promise((resolve) => migrator.once("exit", resolve));
      const probeRunning = async () =>
        (await queryOnce<{ n: number }>(database.url, `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event = 'PgSleep'`))[0]!.n > 0;
      while (!(await probeRunning())) await new Promise((resolve) => setTimeout(resolve, 50));
      migrator.kill("SIGKILL");
      await exited;
      while (await probeRunning()) await new Promise((resolve) => setTimeout(resolve, 50));
      const left = await queryOnce<{ finished: boolean }>(database.url, `SELECT finished_at IS NOT NULL AS finished FROM _prisma_migrations WHERE migration_name = '${PROBE}'`);
      expect(left, "the killed process left its migration started, not finished").toEqual([{ finished: false }]);

      await queryOnce(database.url, `ALTER DATABASE ${name} RESET tollgate.probe_sleep`);
      expect(await applyMigrations(postgresForMigrations(database.url), probe.dir)).toEqual([PROBE]);
      const rows = await queryOnce<{ finished: boolean; rolled_back: boolean }>(
        database.url,
        `SELECT finished_at IS NOT NULL AS finished, rolled_back_at IS NOT NULL AS rolled_back FROM _prisma_migrations WHERE migration_name = '${PROBE}' ORDER BY started_at`,
      );
      expect(rows).toEqual([{ finished: false, rolled_back: true }, { finished: true, rolled_back: false }]);
      expect(await queryOnce(database.url, `SELECT to_regclass('migration_probe') IS NOT NULL AS present`)).toEqual([{ present: true }]);
    } finally {
      await probe.remove();
      await database.drop();
    }
  }, 180_000);

  it.skipIf(TEST_TARGET !== "embedded")("migrations: an embedded database left mid-migration by a killed process migrates on the next start", async () => {
    // The embedded database lives in the process that migrates, so the test
    // writes the row that process leaves (started, no step, no logs) itself.
    const probe = await migrationsWithProbe();
    const pglite = await PGlite.create();
    try {
      await applyMigrations(new PrismaPGlite(pglite));
      const checksum = createHash("sha256").update(await readFile(path.join(probe.dir, PROBE, "migration.sql"))).digest("hex");
      await pglite.query(
        `INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at, applied_steps_count) VALUES ('interrupted', $1, $2, now(), 0)`,
        [checksum, PROBE],
      );
      expect(await applyMigrations(new PrismaPGlite(pglite), probe.dir)).toEqual([PROBE]);
      const failed = await pglite.query(`SELECT 1 FROM _prisma_migrations WHERE finished_at IS NULL AND rolled_back_at IS NULL`);
      expect(failed.rows).toEqual([]);
    } finally {
      await pglite.close();
      await probe.remove();
    }
  });

  it.skipIf(TEST_TARGET === "postgres")("migrations: a migration that failed on its own SQL still stops the start", async () => {
    const pglite = await PGlite.create();
    const probe = await migrationsWithProbe();
    try {
      await applyMigrations(new PrismaPGlite(pglite));
      await pglite.query(
        `INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at, applied_steps_count, logs) VALUES ('failed', 'x', $1, now(), 0, 'syntax error')`,
        [PROBE],
      );
      await expect(applyMigrations(new PrismaPGlite(pglite), probe.dir)).rejects.toThrow(/P3009|failed migrations/);
    } finally {
      await pglite.close();
      await probe.remove();
    }
  });
});
