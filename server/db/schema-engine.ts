// Prisma's schema engine compiled to WebAssembly, driven through a driver
// adapter: applies the checked-in migrations and writes new ones without the
// native engine binary that Prisma's CLI would download.
import { readFile, readdir } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import * as engineGlue from "@prisma/schema-engine-wasm/schema_engine_bg";
import type { MigrationList, SchemaEngine, SchemaFilter } from "@prisma/schema-engine-wasm";

const require = createRequire(import.meta.url);

export const MIGRATIONS_DIR = path.resolve(process.cwd(), "prisma/migrations");
export const SCHEMA_PATH = path.resolve(process.cwd(), "prisma/schema.prisma");

const noFilters: SchemaFilter = { externalTables: [], externalEnums: [] };

let engineModule: Promise<typeof engineGlue> | undefined;

// The package imports its .wasm as an ES module, which Node 20 only allows
// behind a flag; instantiating it here keeps the server flag-free.
function loadEngineModule(): Promise<typeof engineGlue> {
  engineModule ??= (async () => {
    const glue = engineGlue as typeof engineGlue & {
      __wbg_set_wasm(exports: WebAssembly.Exports): void;
    };
    const wasmPath = path.join(
      path.dirname(require.resolve("@prisma/schema-engine-wasm")),
      "schema_engine_bg.wasm",
    );
    const { instance } = await WebAssembly.instantiate(await readFile(wasmPath), {
      "./schema_engine_bg.js": glue as unknown as WebAssembly.ModuleImports,
    });
    glue.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return glue;
  })();
  return engineModule;
}

/**
 * Runs `use` with a schema engine on the factory's connections, then frees the
 * engine and disposes of every connection it opened. The engine holds PostgreSQL's
 * migration advisory lock on its connection and frees itself without closing
 * it: left open, the lock held another node's migrations back until the pool
 * dropped the idle connection.
 */
async function withEngine<T>(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  schemaText: string | undefined,
  use: (engine: SchemaEngine) => Promise<T>,
): Promise<T> {
  const glue = await loadEngineModule();
  const datamodels: [string, string][] = [[SCHEMA_PATH, schemaText ?? (await readFile(SCHEMA_PATH, "utf8"))]];
  const connections = closingConnections(adapterFactory);
  try {
    const engine = await (glue as unknown as { SchemaEngine: typeof SchemaEngine }).SchemaEngine.new(
      { datamodels },
      () => {},
      bindMigrationAwareSqlAdapterFactory(connections.factory),
    );
    try {
      return await use(engine);
    } finally {
      engine.free();
    }
  } finally {
    await connections.closeAll();
  }
}

/** Reads prisma/migrations the way `prisma migrate deploy` does. */
export async function readMigrations(baseDir = MIGRATIONS_DIR): Promise<MigrationList> {
  const entries = await readdir(baseDir, { withFileTypes: true }).catch(() => []);
  const directories = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  const lockfilePath = path.join(baseDir, "migration_lock.toml");
  return {
    baseDir,
    lockfile: {
      path: "migration_lock.toml",
      content: await readFile(lockfilePath, "utf8").catch(() => null),
    },
    shadowDbInitScript: "",
    migrationDirectories: await Promise.all(
      directories.map(async (name) => ({
        path: name,
        migrationFile: {
          path: "migration.sql",
          content: await readFile(path.join(baseDir, name, "migration.sql"), "utf8").then(
            (text) => ({ tag: "ok" as const, value: text }),
            (error: Error) => ({ tag: "error" as const, value: error.message }),
          ),
        },
      })),
    ),
  };
}

/** Prisma Migrate's advisory lock on PostgreSQL: held by whoever applies migrations. */
const MIGRATION_LOCK_KEY = 72707369;

/**
 * Clears what a migrating process killed mid-way left behind, so the next start
 * migrates instead of refusing with P3009 ("failed migrations"). Each migration
 * file is one script, which PostgreSQL runs as one transaction: a row started and
 * neither finished nor failed (no logs) belongs to a process that died. With no
 * step recorded its script was rolled back with it, so it is marked rolled back
 * and applied again; with its step recorded the script had committed, so it is
 * marked finished. This runs under the migration lock, so a migration another
 * node is applying right now is never touched. A migration that failed on its own
 * SQL keeps its logs and still stops the start, for a person to look at.
 */
export async function releaseInterruptedMigrations(adapterFactory: SqlMigrationAwareDriverAdapterFactory): Promise<string[]> {
  const connection = await adapterFactory.connect();
  const query = (sql: string) => connection.queryRaw({ sql, args: [], argTypes: [] });
  try {
    const table = await query(`SELECT to_regclass('_prisma_migrations') IS NOT NULL AS present`);
    if (table.rows[0]?.[0] !== true) return [];
    await query(`SELECT true AS locked FROM pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
    try {
      const released = await query(
        `UPDATE "_prisma_migrations"
            SET rolled_back_at = CASE WHEN applied_steps_count = 0 THEN now() END,
                finished_at = CASE WHEN applied_steps_count > 0 THEN now() END
          WHERE finished_at IS NULL AND rolled_back_at IS NULL AND logs IS NULL
          RETURNING migration_name`,
      );
      return released.rows.map((row) => String(row[0]));
    } finally {
      await query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY})`);
    }
  } finally {
    await connection.dispose();
  }
}

/**
 * Applies every checked-in migration not yet recorded in _prisma_migrations,
 * after clearing what a process killed while migrating left (see above).
 */
export async function applyMigrations(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  baseDir = MIGRATIONS_DIR,
): Promise<string[]> {
  await releaseInterruptedMigrations(adapterFactory);
  return withEngine(adapterFactory, undefined, async (engine) => {
    const result = await engine.applyMigrations({
      migrationsList: await readMigrations(baseDir),
      filters: noFilters,
    });
    return result.appliedMigrationNames;
  });
}

/** The factory with every connection it opens remembered, to be closed when the engine is done. */
function closingConnections(adapterFactory: SqlMigrationAwareDriverAdapterFactory) {
  const opened: { dispose(): Promise<void> }[] = [];
  const remember = async <T extends { dispose(): Promise<void> }>(connection: Promise<T>) => {
    const adapter = await connection;
    opened.push(adapter);
    return adapter;
  };
  const factory: SqlMigrationAwareDriverAdapterFactory = {
    provider: adapterFactory.provider,
    adapterName: adapterFactory.adapterName,
    connect: () => remember(adapterFactory.connect()),
    connectToShadowDb: () => remember(adapterFactory.connectToShadowDb()),
  };
  return { factory, closeAll: () => Promise.all(opened.splice(0).map((adapter) => adapter.dispose())).then(() => undefined) };
}

/**
 * The SQL that takes a database at the end of the checked-in migrations to the
 * schema: empty when they agree. The migrations are replayed on the shadow
 * database that `shadowAdapterFactory` connects to.
 */
export async function diffMigrationsToSchema(
  shadowAdapterFactory: SqlMigrationAwareDriverAdapterFactory,
  schemaText?: string,
  baseDir = MIGRATIONS_DIR,
): Promise<string> {
  const text = schemaText ?? (await readFile(SCHEMA_PATH, "utf8"));
  return withEngine(shadowAdapterFactory, text, async (engine) => {
    const migrations = await readMigrations(baseDir);
    const result = await engine.diff({
      from: migrations.migrationDirectories.length > 0 ? { tag: "migrations", ...migrations } : { tag: "empty" },
      to: { tag: "schemaDatamodel", files: [{ path: SCHEMA_PATH, content: text }] },
      script: true,
      exitCode: true,
      filters: noFilters,
    });
    const sql = result.stdout ?? "";
    return result.exitCode === 2 ? sql : "";
  });
}

/**
 * The SQL that creates prisma/schema.prisma's tables, indexes and types in an
 * empty database: what the migrations build, less the functions and triggers
 * (server/db/sql/) and what the schema cannot say (partial indexes).
 */
export async function schemaSql(adapterFactory: SqlMigrationAwareDriverAdapterFactory): Promise<string> {
  const text = await readFile(SCHEMA_PATH, "utf8");
  return withEngine(adapterFactory, text, async (engine) => {
    const result = await engine.diff({
      from: { tag: "empty" },
      to: { tag: "schemaDatamodel", files: [{ path: SCHEMA_PATH, content: text }] },
      script: true,
      exitCode: null,
      filters: noFilters,
    });
    return result.stdout ?? "";
  });
}
