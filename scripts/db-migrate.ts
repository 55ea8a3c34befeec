// npm run db:migrate: applies the checked-in migrations to the configured database.
import { openDatabase } from "../server/db/client.ts";
import { env } from "../server/env.ts";
import { applyMigrations } from "../server/db/schema-engine.ts";

const config = env();
const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.TOLLGATE_DATA_DIR, embeddedCacheMb: config.TOLLGATE_EMBEDDED_CACHE_MB, migrate: false });
try {
  const applied = await applyMigrations(database.migrationFactory);
  console.log(applied.length ? `applied: ${applied.join(", ")}` : "the database is up to date");
} finally {
  await database.close();
}
