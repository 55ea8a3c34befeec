// What a statement costs on the server's main thread and through the embedded
// database's own thread (TOLLGATE_EMBEDDED_THREAD=worker): one statement at a
// time through the direct statements' adapter, a trivial one and one that
// keeps PostgreSQL busy for about 0.4 ms, on the same folder.
//
//   npx tsx bench/thread-crossing.ts
//   taskset -c 0 npx tsx bench/thread-crossing.ts   # both threads on one core
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import type { SqlDriverAdapter, SqlQuery } from "@prisma/driver-adapter-utils";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { pgliteOptions } from "../server/db/client.ts";
import { DatabaseThread } from "../server/db/database-thread/database-thread.ts";
import { createEmbeddedDatabase } from "../server/db/embedded-folder.ts";
import { withPreparedStatements } from "../server/db/prepared-statements.ts";
import { percentile } from "./stats.ts";

const COUNT = Number(process.env.CROSSING_COUNT ?? 3000);
const WARM_UP = 300;
const argTypes = [{ scalarType: "int", dbType: "INT4", arity: "scalar" }] as SqlQuery["argTypes"];
const STATEMENTS: [string, SqlQuery][] = [
  ["SELECT $1::int", { sql: "SELECT $1::int AS n", args: [1], argTypes }],
  ["a join of 2,000 by 200 rows", { sql: "SELECT count(*)::int + $1::int AS n FROM generate_series(1, 2000) g JOIN generate_series(1, 200) h ON g = h", args: [1], argTypes }],
];

async function timed(adapter: SqlDriverAdapter, query: SqlQuery): Promise<string> {
  for (let i = 0; i < WARM_UP; i++) await adapter.queryRaw(query);
  const times: number[] = [];
  for (let i = 0; i < COUNT; i++) {
    const started = performance.now();
    await adapter.queryRaw(query);
    times.push((performance.now() - started) * 1000);
  }
  return `p50 ${percentile(times, 50).toFixed(0)} µs, p90 ${percentile(times, 90).toFixed(0)} µs`;
}

const dataDir = await mkdtemp(path.join(tmpdir(), "tollgate-crossing-"));
const { startParams } = pgliteOptions(16);
await createEmbeddedDatabase(dataDir, startParams);
const pglite = await PGlite.create(dataDir, { startParams });
const onMain = await new PrismaPGlite(withPreparedStatements(pglite)).connect();
const main: string[] = [];
for (const [, query] of STATEMENTS) main.push(await timed(onMain, query));
await pglite.close();
const thread = await DatabaseThread.open({ dataDir, startParams });
const onThread = await thread.factory("direct").connect();
const threaded: string[] = [];
for (const [, query] of STATEMENTS) threaded.push(await timed(onThread, query));
await thread.close();
await rm(dataDir, { recursive: true, force: true });
STATEMENTS.forEach(([name], index) => console.log(`${name}: main thread ${main[index]}; database thread ${threaded[index]}`));
