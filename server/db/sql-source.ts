// The database's logic as source: server/db/sql/ holds the current definition
// of every SQL function, with the triggers that call it, one function a file
// (and the composite types they return, one a file).
// The migrations stay the history a database is brought up to date with; this
// module compares what they build with what the files say, and writes the SQL
// that takes the one to the other (npm run db:migration).
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

export const SQL_SOURCE_DIR = path.resolve(process.cwd(), "server/db/sql");

/** Runs one query (or several statements) and returns the rows of the last. */
export type Query = <Row>(sql: string) => Promise<Row[]>;

export interface SqlSourceFile {
  /** The file's name, e.g. tollgate_begin_request.sql. */
  name: string;
  text: string;
}

/** Every .sql file of the folder, in name order. */
export async function readSqlSource(dir = SQL_SOURCE_DIR): Promise<SqlSourceFile[]> {
  const names = (await readdir(dir)).filter((name) => name.endsWith(".sql")).sort();
  return Promise.all(names.map(async (name) => ({ name, text: await readFile(path.join(dir, name), "utf8") })));
}

export interface CatalogFunction {
  /** Name and argument types, as DROP FUNCTION takes them: tollgate_end_request(text,text,...). */
  identity: string;
  name: string;
  /** What it returns: a different one cannot be replaced in place. */
  result: string;
  /** pg_get_functiondef: CREATE OR REPLACE FUNCTION ... */
  definition: string;
}

export interface CatalogTrigger {
  /** "Table".name */
  identity: string;
  name: string;
  table: string;
  /** The identity of the function it calls. */
  calls: string;
  /** pg_get_triggerdef: CREATE TRIGGER ... */
  definition: string;
}

export interface CatalogType {
  /** Its name. */
  identity: string;
  /** CREATE TYPE name AS (...), from its attributes. */
  definition: string;
}

export interface Catalog {
  /** Composite types the functions return (not tables' row types, not Prisma's enums). */
  types: Map<string, CatalogType>;
  functions: Map<string, CatalogFunction>;
  triggers: Map<string, CatalogTrigger>;
}

/** The functions and triggers of the public schema, as PostgreSQL itself prints them. */
export async function readCatalog(query: Query): Promise<Catalog> {
  const types = await query<CatalogType>(`
    SELECT format('%I', t.typname) AS identity,
           format('CREATE TYPE %I AS (%s)', t.typname,
             string_agg(format('%I %s', a.attname, format_type(a.atttypid, a.atttypmod)), ', ' ORDER BY a.attnum)) AS definition
    FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
    JOIN pg_class c ON c.oid = t.typrelid AND c.relkind = 'c'
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    WHERE n.nspname = 'public'
    GROUP BY t.typname ORDER BY 1`);
  const functions = await query<CatalogFunction>(`
    SELECT p.oid::regprocedure::text AS identity, p.proname AS name,
           pg_get_function_result(p.oid) AS result, pg_get_functiondef(p.oid) AS definition
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = 'public' AND p.prokind = 'f'
      AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
    ORDER BY 1`);
  const triggers = await query<CatalogTrigger>(`
    SELECT quote_ident(c.relname) || '.' || quote_ident(t.tgname) AS identity, t.tgname AS name,
           quote_ident(c.relname) AS "table", t.tgfoid::regprocedure::text AS calls,
           pg_get_triggerdef(t.oid) AS definition
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE NOT t.tgisinternal AND n.nspname = 'public'
    ORDER BY 1`);
  return {
    types: new Map(types.map((row) => [row.identity, row])),
    functions: new Map(functions.map((row) => [row.identity, row])),
    triggers: new Map(triggers.map((row) => [row.identity, row])),
  };
}

/** Files that create a type come first: the functions' signatures name it. */
const typesFirst = (files: SqlSourceFile[]) => [...files].sort((a, b) => Number(!/^CREATE TYPE/m.test(a.text)) - Number(!/^CREATE TYPE/m.test(b.text)));

/**
 * Sets the database's functions, triggers and composite types to the
 * files': every one of the public schema is dropped, then each file is run.
 * Bodies are checked when called, not here, so functions load in any order.
 */
export async function loadSqlSource(query: Query, files: SqlSourceFile[]): Promise<void> {
  const catalog = await readCatalog(query);
  for (const fn of catalog.functions.values()) await query(`DROP FUNCTION IF EXISTS ${fn.identity} CASCADE`);
  for (const type of catalog.types.values()) await query(`DROP TYPE IF EXISTS ${type.identity} CASCADE`);
  await query("SET check_function_bodies = off");
  for (const file of typesFirst(files)) {
    try {
      await query(file.text);
    } catch (error) {
      throw new Error(`server/db/sql/${file.name}: ${(error as Error).message}`);
    }
  }
  await query("RESET check_function_bodies");
}

/** How two catalogs differ, object by object; empty when they agree. */
export function catalogDifferences(expected: Catalog, actual: Catalog): string[] {
  const differences: string[] = [];
  for (const [kind, want, got] of [
    ["type", expected.types, actual.types],
    ["function", expected.functions, actual.functions],
    ["trigger", expected.triggers, actual.triggers],
  ] as const) {
    for (const [identity, object] of want) {
      const other = got.get(identity);
      if (!other) differences.push(`${kind} ${identity} is missing`);
      else if (other.definition !== object.definition) differences.push(`${kind} ${identity} differs:\n--- expected\n${object.definition}\n--- actual\n${other.definition}`);
    }
    for (const identity of got.keys()) if (!want.has(identity)) differences.push(`${kind} ${identity} is not expected`);
  }
  return differences;
}

/**
 * The SQL that takes a database whose functions and triggers are `from`'s
 * to `to`'s: a changed body as CREATE OR REPLACE; a removed function, or one
 * whose arguments or result changed, dropped (and created again under its
 * new signature); the triggers of a dropped function dropped first and
 * created again after. Empty when they agree.
 */
export function migrationBetween(from: Catalog, to: Catalog): string {
  // A composite type cannot be altered in place: it is dropped and created
  // again, and with it every function whose signature or body names it.
  const dropTypes = [...from.types.values()].filter((type) => to.types.get(type.identity)?.definition !== type.definition);
  const createTypes = [...to.types.values()].filter((type) => from.types.get(type.identity)?.definition !== type.definition);
  const namesDroppedType = (fn: CatalogFunction) => dropTypes.some((type) => new RegExp(`\\b${type.identity}\\b`).test(fn.definition));
  const dropFunctions = [...from.functions.values()].filter((fn) => {
    const next = to.functions.get(fn.identity);
    return !next || next.result !== fn.result || namesDroppedType(fn);
  });
  const dropped = new Set(dropFunctions.map((fn) => fn.identity));
  const dropTriggers = [...from.triggers.values()].filter((trigger) => dropped.has(trigger.calls) || to.triggers.get(trigger.identity)?.definition !== trigger.definition);
  const droppedTriggers = new Set(dropTriggers.map((trigger) => trigger.identity));
  const createFunctions = [...to.functions.values()].filter((fn) => dropped.has(fn.identity) || from.functions.get(fn.identity)?.definition !== fn.definition);
  const createTriggers = [...to.triggers.values()].filter((trigger) => droppedTriggers.has(trigger.identity) || !from.triggers.has(trigger.identity));

  const statements = [
    ...dropTriggers.map((trigger) => `DROP TRIGGER ${quoteName(trigger.name)} ON ${trigger.table};`),
    ...dropFunctions.map((fn) => `DROP FUNCTION ${fn.identity};`),
    ...dropTypes.map((type) => `DROP TYPE ${type.identity};`),
    ...createTypes.map((type) => `${type.definition};`),
    ...createFunctions.map((fn) => `${fn.definition.trimEnd()};`),
    ...createTriggers.map((trigger) => `${trigger.definition};`),
  ];
  if (statements.length === 0) return "";
  // Bodies are checked when called: a function may call one created after it.
  return ["-- Functions and triggers from server/db/sql/ (npm run db:migration).", "SET check_function_bodies = off;", ...statements, "RESET check_function_bodies;", ""].join("\n\n");
}

const quoteName = (name: string) => (/^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`);
