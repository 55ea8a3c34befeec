// Creates the embedded database's folder in a short-lived child process.
//
// PGlite creates a database by running initdb in a second PostgreSQL instance
// and copying its files into the first. The process that does this keeps the
// memory it took for the rest of its life: WebAssembly memory never shrinks and
// the C heap keeps what was freed in fragments. A server that created its
// database held about 150 MB more from then on than the same server started on
// that folder afterwards. In a child process that memory ends with it.
import { execFile } from "node:child_process";
import { access } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { log } from "../log.ts";

const CREATE_DATABASE = `
const [pgliteUrl, dataDir, ...startParams] = process.argv.slice(1);
try {
  const { PGlite } = await import(pgliteUrl);
  const database = await PGlite.create(dataDir, { startParams });
  await database.close();
} catch (error) {
  // PGlite's file system errors carry an errno and no message.
  process.stderr.write(error?.message || \`PGlite's file system failed with WASI errno \${error?.errno ?? String(error)}\`);
  process.exit(1);
}
`;

export async function holdsEmbeddedDatabase(dataDir: string): Promise<boolean> {
  return access(path.join(dataDir, "PG_VERSION")).then(
    () => true,
    () => false,
  );
}

/** Creates a PGlite database in `dataDir` unless the folder holds one already. */
export async function createEmbeddedDatabase(dataDir: string, startParams: string[]): Promise<void> {
  if (await holdsEmbeddedDatabase(dataDir)) return;
  // Said before it starts: on a busy machine it takes a while, and a start that stalls shows where.
  log.info(`creating the embedded database in ${dataDir} (about 10 s of one core)`);
  const pgliteUrl = import.meta.resolve("@electric-sql/pglite");
  try {
    await promisify(execFile)(process.execPath, ["--input-type=module", "--eval", CREATE_DATABASE, pgliteUrl, dataDir, ...startParams]);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`could not create the embedded database in ${dataDir}: ${stderr || (error as Error).message}`);
  }
}
