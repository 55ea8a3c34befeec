// What one 100-event trace batch costs PGlite itself, without HTTP or the
// server: the same insert into a table shaped like TraceEvent with its three
// foreign keys and two indexes (as before migration
// 20261124181452_trace_event_without_foreign_keys), without the foreign keys
// and the request index (as now), and a batch stored as one row holding a JSON
// array (not built; the reason is in bench/NOTES.md's history in git). Run: npx tsx bench/trace-insert.ts
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";

const BATCHES = Number(process.env.BENCH_TRACE_BATCHES ?? 300);

const SCHEMA = `
  CREATE TYPE category AS ENUM ('INTERACTION', 'EXECUTION');
  CREATE TABLE workspace (id text PRIMARY KEY);
  CREATE TABLE task (id text PRIMARY KEY);
  CREATE TABLE request (id text PRIMARY KEY, workspace_id text NOT NULL, session_id text NOT NULL, task_id text NOT NULL);
  INSERT INTO workspace VALUES ('wsp_0123456789abcdefghij');
  INSERT INTO task VALUES ('tsk_0123456789abcdefghij');
  INSERT INTO request VALUES ('req_0123456789abcdefghij', 'wsp_0123456789abcdefghij', 'ses_0123456789abcdefghij', 'tsk_0123456789abcdefghij');
  CREATE TABLE with_keys (
    id bigserial PRIMARY KEY, workspace_id text NOT NULL REFERENCES workspace, session_id text NOT NULL,
    task_id text NOT NULL REFERENCES task, request_id text NOT NULL REFERENCES request,
    category category NOT NULL, type text NOT NULL, name text, data json, created_at timestamp(3) NOT NULL);
  CREATE INDEX ON with_keys (task_id, id);
  CREATE INDEX ON with_keys (request_id, id);
  CREATE TABLE without_keys (
    id bigserial PRIMARY KEY, workspace_id text NOT NULL, session_id text NOT NULL, task_id text NOT NULL, request_id text NOT NULL,
    category category NOT NULL, type text NOT NULL, name text, data json, created_at timestamp(3) NOT NULL);
  CREATE INDEX ON without_keys (task_id, id);
  CREATE TABLE one_row_per_batch (id bigserial PRIMARY KEY, task_id text NOT NULL, request_id text NOT NULL, events json NOT NULL, created_at timestamp(3) NOT NULL);
  CREATE INDEX ON one_row_per_batch (task_id, id);`;

const rowsInto = (table: string) => `
  INSERT INTO ${table} (workspace_id, session_id, task_id, request_id, category, type, name, data, created_at)
  SELECT r.workspace_id, r.session_id, r.task_id, r.id, (e.value->>'category')::category, e.value->>'type', e.value->>'name', e.value->'data', now()
  FROM request r CROSS JOIN json_array_elements($1::json) AS e(value)
  WHERE r.id = 'req_0123456789abcdefghij'`;

const VARIANTS: [string, string][] = [
  ["a row per event, with the foreign keys", rowsInto("with_keys")],
  ["a row per event, without them (as now)", rowsInto("without_keys")],
  ["the batch as one row", `INSERT INTO one_row_per_batch (task_id, request_id, events, created_at) SELECT task_id, id, $1::json, now() FROM request WHERE id = 'req_0123456789abcdefghij'`],
];

const batch = JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ category: "EXECUTION", type: "tool_call", name: "search", data: { query: `q${i}`, page: i } })));
const dataDir = await mkdtemp(path.join(tmpdir(), "tollgate-trace-insert-"));
const db = await PGlite.create(dataDir);
try {
  await db.exec(SCHEMA);
  console.log(`PGlite, ${BATCHES} batches of 100 events per variant after as many to warm up; ms per batch (median of 3 rounds)`);
  const timings = new Map<string, number[]>(VARIANTS.map(([label]) => [label, []]));
  for (let round = 0; round < 4; round++) {
    for (const [label, sql] of VARIANTS) {
      const started = performance.now();
      for (let i = 0; i < BATCHES; i++) await db.query(sql, [batch]);
      if (round > 0) timings.get(label)!.push((performance.now() - started) / BATCHES);
    }
  }
  for (const [label, runs] of timings) {
    const median = [...runs].sort((a, b) => a - b)[1]!;
    console.log(`${label}: ${median.toFixed(2)} ms per batch, ${Math.round((100 / median) * 1000)} events/s`);
  }
} finally {
  await db.close();
  await rm(dataDir, { recursive: true, force: true });
}
