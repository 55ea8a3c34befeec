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

/** Applies every checked-in migration not yet recorded in _prisma_migrations. */
export async function applyMigrations(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  baseDir = MIGRATIONS_DIR,
): Promise<string[]> {
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
