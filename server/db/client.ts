// Opens the one database of this process: PGlite in a folder when no
// DATABASE_URL is given, else a PostgreSQL server. Migrations are applied here.
import { mkdir } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaClient } from "./generated/client.ts";
import { applyMigrations } from "./schema-engine.ts";

export type { PrismaClient };
export type DatabaseTarget = "embedded" | "postgres";

export interface Database {
  prisma: PrismaClient;
  target: DatabaseTarget;
  /** Where the data lives: the folder (embedded) or the URL without its password. */
  location: string;
  adapterFactory: SqlMigrationAwareDriverAdapterFactory;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  /** Folder for the embedded database; "memory://" keeps it in memory. */
  dataDir: string;
  migrate?: boolean;
}

function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparsable URL)";
  }
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  let adapterFactory: SqlMigrationAwareDriverAdapterFactory;
  let closeDriver: () => Promise<void>;
  let target: DatabaseTarget;
  let location: string;

  if (options.databaseUrl) {
    const factory = new PrismaPg({ connectionString: options.databaseUrl, max: 10 });
    adapterFactory = factory;
    closeDriver = async () => {};
    target = "postgres";
    location = redactUrl(options.databaseUrl);
  } else {
    if (!options.dataDir.startsWith("memory://")) await mkdir(options.dataDir, { recursive: true });
    const pglite = await PGlite.create(options.dataDir);
    adapterFactory = new PrismaPGlite(pglite);
    closeDriver = () => pglite.close();
    target = "embedded";
    location = options.dataDir;
  }

  if (options.migrate !== false) await applyMigrations(adapterFactory);

  const prisma = new PrismaClient({ adapter: adapterFactory });
  return {
    prisma,
    target,
    location,
    adapterFactory,
    async close() {
      await prisma.$disconnect();
      await closeDriver();
    },
  };
}
