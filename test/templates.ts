// Migrated databases made once and copied for each test: an embedded
// database's folder (and the same as a tar image for in-memory copies), and a
// PostgreSQL template database. Both are made by the server's own migration
// path (openDatabase), so every copy is what a server finds after migrating a
// new database; tests that exercise the migrations themselves start from empty
// databases instead.
//
// Creating an embedded database runs PostgreSQL's initdb in WebAssembly and
// the migrations through the schema engine: 4 to 10 s a test file on two busy
// cores, against about 1 s for a copy. The templates are named by a hash of
// what they depend on, so a changed migration makes new ones, and several
// test processes (and checkouts) share one.
import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { openDatabase, pgliteOptions } from "../server/db/client.ts";
import { createEmbeddedDatabase } from "../server/db/embedded-folder.ts";
import { MIGRATIONS_DIR, readMigrations } from "../server/db/schema-engine.ts";
import { parseEnv } from "../server/env.ts";

const TEMPLATE_PREFIX = "tollgate_template_";
const FOLDER_PREFIX = "tollgate-test-template-";
/** Templates of older migrations are removed after this long unused. */
const STALE_AFTER_MS = 24 * 60 * 60 * 1000;

const embeddedCacheMb = () => parseEnv({}).TOLLGATE_EMBEDDED_CACHE_MB;

/** A hash of the migrations and of the database engines they are applied by. */
async function templateKey(): Promise<string> {
  const hash = createHash("sha256");
  for (const name of ["@electric-sql/pglite", "@prisma/schema-engine-wasm"]) hash.update(await packageVersion(name));
  hash.update(pgliteOptions(embeddedCacheMb()).startParams.join(" "));
  // What a template folder holds: the migrated database, its image, and the empty database's image.
  hash.update("data, data.tar, empty.tar");
  for (const migration of (await readMigrations(MIGRATIONS_DIR)).migrationDirectories) {
    hash.update(migration.path);
    hash.update(JSON.stringify(migration.migrationFile.content));
  }
  return hash.digest("hex").slice(0, 16);
}

/** An installed package's version, from the package.json above its entry point (not every package exports that file). */
async function packageVersion(name: string): Promise<string> {
  let folder = path.dirname(createRequire(import.meta.url).resolve(name));
  for (;;) {
    const manifest = await readFile(path.join(folder, "package.json"), "utf8").then((text) => JSON.parse(text) as { name?: string; version?: string }, () => undefined);
    if (manifest?.name === name) return manifest.version ?? "";
    const parent = path.dirname(folder);
    if (parent === folder) throw new Error(`no package.json of ${name} found`);
    folder = parent;
  }
}

export interface EmbeddedTemplate {
  /** A migrated embedded database's folder: copy it, never open it. */
  folder: string;
  /** The same database as a tar image, for PGlite's loadDataDir. */
  image: string;
  /** The database as initdb left it, before any migration, as a tar image. */
  emptyImage: string;
}

let embedded: Promise<EmbeddedTemplate> | undefined;

/** The embedded template of the current migrations, made on first use. */
export function embeddedTemplate(): Promise<EmbeddedTemplate> {
  embedded ??= (async () => {
    const key = await templateKey();
    const folder = path.join(tmpdir(), `${FOLDER_PREFIX}${key}`);
    const template = { folder: path.join(folder, "data"), image: path.join(folder, "data.tar"), emptyImage: path.join(folder, "empty.tar") };
    if (await exists(path.join(folder, "ready"))) {
      // Marked as in use, so another checkout's clean-up leaves it alone.
      await utimes(folder, new Date(), new Date()).catch(() => undefined);
      return template;
    }
    await removeStaleFolders();
    // Made aside and renamed into place, so a concurrent run never sees half of one.
    const building = await mkdtemp(`${folder}-building-`);
    try {
      const dataDir = path.join(building, "data");
      await mkdir(dataDir);
      await createEmbeddedDatabase(dataDir, pgliteOptions(embeddedCacheMb()).startParams);
      await writeImage(dataDir, path.join(building, "empty.tar"));
      const database = await openDatabase({ dataDir, embeddedCacheMb: embeddedCacheMb() });
      await database.close();
      await writeImage(dataDir, path.join(building, "data.tar"));
      await writeFile(path.join(building, "ready"), "");
    } catch (error) {
      await rm(building, { recursive: true, force: true });
      throw error;
    }
    await rename(building, folder).catch(async () => {
      // Another process finished the same template first.
      await rm(building, { recursive: true, force: true });
    });
    return template;
  })();
  return embedded;
}

/** The embedded database in `dataDir` as a tar image in `file`. */
async function writeImage(dataDir: string, file: string): Promise<void> {
  const pglite = await PGlite.create(dataDir, pgliteOptions(embeddedCacheMb()));
  const image = await pglite.dumpDataDir("none");
  await pglite.close();
  await writeFile(file, Buffer.from(await image.arrayBuffer()));
}

/**
 * An in-memory PGlite holding an empty database, as initdb leaves it: loaded
 * from an image in under a second, where initdb takes seconds of one core.
 */
export async function emptyEmbedded(): Promise<PGlite> {
  return fromImage((await embeddedTemplate()).emptyImage);
}

/** An in-memory PGlite loaded from a tar image, started as the server starts its own. */
async function fromImage(image: string): Promise<PGlite> {
  return PGlite.create({ loadDataDir: new Blob([await readFile(image)]), ...pgliteOptions(embeddedCacheMb()) });
}

/** A new folder holding a copy of the migrated embedded database. */
export async function copyEmbeddedTemplate(into: string): Promise<void> {
  const { folder } = await embeddedTemplate();
  await mkdir(into, { recursive: true });
  await cp(folder, into, { recursive: true });
}

/** An in-memory PGlite holding the migrated database, started as the server starts its own. */
export async function embeddedFromTemplate(): Promise<PGlite> {
  return fromImage((await embeddedTemplate()).image);
}

const postgresTemplates = new Map<string, Promise<string>>();

/** The name of the PostgreSQL template database of the current migrations on `adminUrl`'s server, made on first use. */
export function postgresTemplate(adminUrl: string): Promise<string> {
  let template = postgresTemplates.get(adminUrl);
  if (!template) {
    template = makePostgresTemplate(adminUrl);
    postgresTemplates.set(adminUrl, template);
  }
  return template;
}

async function makePostgresTemplate(adminUrl: string): Promise<string> {
  const name = `${TEMPLATE_PREFIX}${await templateKey()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const found = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (found.rowCount) return name;
    await removeStaleTemplates(admin);
    // Made under another name and renamed, so a concurrent run never copies half of one.
    const building = `${name}_${process.pid}`;
    await admin.query(`CREATE DATABASE ${building}`);
    const url = new URL(adminUrl);
    url.pathname = `/${building}`;
    try {
      const database = await openDatabase({ databaseUrl: url.toString(), dataDir: "", embeddedCacheMb: embeddedCacheMb() });
      await database.close();
      await admin.query(`COMMENT ON DATABASE ${building} IS 'tollgate test template, made ${new Date().toISOString()}'`);
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    } catch (error) {
      await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      const finished = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
      if (!finished.rowCount) throw error;
    }
    return name;
  } finally {
    await admin.end();
  }
}

async function removeStaleTemplates(admin: pg.Client): Promise<void> {
  const { rows } = await admin.query<{ datname: string; made: string | null }>(
    `SELECT datname, substring(shobj_description(oid, 'pg_database') from 'made (.*)$') AS made
       FROM pg_database WHERE datname LIKE '${TEMPLATE_PREFIX}%'`,
  );
  for (const row of rows) {
    if (row.made && Date.now() - Date.parse(row.made) > STALE_AFTER_MS) {
      await admin.query(`DROP DATABASE IF EXISTS ${row.datname} WITH (FORCE)`).catch(() => undefined);
    }
  }
}

async function removeStaleFolders(): Promise<void> {
  for (const entry of await readdir(tmpdir()).catch(() => [])) {
    if (!entry.startsWith(FOLDER_PREFIX)) continue;
    const folder = path.join(tmpdir(), entry);
    const modified = await stat(folder).then((stats) => stats.mtimeMs, () => Date.now());
    if (Date.now() - modified > STALE_AFTER_MS) await rm(folder, { recursive: true, force: true });
  }
}

function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
