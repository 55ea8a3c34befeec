// A process that applies the migrations in a folder to a PostgreSQL database,
// for the test that kills a process while it migrates.
import { postgresForMigrations } from "../server/db/client.ts";
import { applyMigrations } from "../server/db/schema-engine.ts";

const [url, dir] = process.argv.slice(2);
if (!url || !dir) throw new Error("usage: fixtures-apply-migrations.ts <database url> <migrations folder>");
await applyMigrations(postgresForMigrations(url), dir);
