// Throwaway PostgreSQL databases and free ports, for tests and the benchmark.
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import pg from "pg";

export interface ThrowawayDatabase {
  url: string;
  drop(): Promise<void>;
}

/** Creates an empty database (or a copy of `template`) on the server of `adminUrl`; drop() removes it. */
export async function createEmptyPostgresDatabase(adminUrl: string, prefix = "tollgate_test", template?: string): Promise<ThrowawayDatabase> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const dropper = new pg.Client({ connectionString: adminUrl });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.end();
    },
  };
}

/** The rows of one query sent on a connection of its own, closed before it answers. */
export async function queryOnce<Row extends pg.QueryResultRow>(url: string, sql: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(sql)).rows;
  } finally {
    await client.end();
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
