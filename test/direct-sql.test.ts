// The hot path's direct statements (server/db/direct-sql.ts) give what
// $queryRaw gives and fail as it fails, on both databases.
import { PGlite, type QueryOptions } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DatabaseStatementError } from "../server/db/direct-sql.ts";
import { Prisma } from "../server/db/generated/client.ts";
import { isUniqueViolation } from "../server/services/transaction.ts";
import { withPreparedStatements } from "../server/db/prepared-statements.ts";
import { createTestDatabase, type TestDatabase } from "./harness.ts";
import { describeWith, needsEmbedded } from "./requires.ts";
import { emptyEmbedded } from "./templates.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.prisma.$executeRawUnsafe(`CREATE TABLE direct_sql_keys (id text PRIMARY KEY)`);
});
afterAll(async () => {
  await db?.close();
});

describe("a direct statement", () => {
  it("gives every column as $queryRaw gives it", async () => {
    const statement = Prisma.sql`
      SELECT ${"text"}::text AS text, 7::int AS int, 9007199254740993::int8 AS int8, 1.5::numeric AS numeric, true AS bool,
        '{"b":1,"a":[1,"x",null]}'::json AS json, '{"b":1,"a":2}'::jsonb AS jsonb, 'null'::json AS json_null, NULL::json AS sql_null,
        ARRAY['a','b']::text[] AS texts, 'PAUSED'::"RunStatus" AS status, ${new Date("2026-01-02T03:04:05.678Z")}::timestamp(3) AS at,
        '2026-05-06 07:08:09.5+02'::timestamptz AS at_zone, ${42}::int AS number_param`;
    const direct = await db.sql.query(statement);
    expect(direct).toEqual(await db.prisma.$queryRaw(statement));
    expect(direct[0]).toMatchObject({ int8: 9007199254740993n, at: new Date("2026-01-02T03:04:05.678Z"), json: { b: 1, a: [1, "x", null] }, json_null: null });
  });

  it("sends every kind of parameter as $queryRaw sends it", async () => {
    const statement = Prisma.sql`
      SELECT ${9007199254740993n}::int8 AS int8, ${new Prisma.Decimal("1.25")}::numeric AS numeric, ${Buffer.from([0, 255])}::bytea = '\\x00ff'::bytea AS bytes,
        ${{ b: 1, a: [true, null] }}::jsonb AS object, ${new Date("2026-01-02T03:04:05.678Z")}::timestamp(3) AS at, ${2.5}::float8 AS number,
        ${true}::boolean AS bool, ${["x", "y"]}::text[] AS texts, ${[new Date("2026-01-02T03:04:05.678Z")]}::timestamp(3)[] = ARRAY['2026-01-02 03:04:05.678'::timestamp(3)] AS dates`;
    const direct = await db.sql.query(statement);
    expect(direct).toEqual(await db.prisma.$queryRaw(statement));
    expect(direct[0]).toMatchObject({ int8: 9007199254740993n, bytes: true, object: { b: 1, a: [true, null] }, bool: true, texts: ["x", "y"], dates: true });
  });

  it("refuses an invalid Date before sending it, as $queryRaw does", async () => {
    await expect(db.sql.query(Prisma.sql`SELECT ${new Date(Number.NaN)}::timestamp(3) AS at`)).rejects.toThrow(/parameter 1 .* invalid Date/);
  });

  it("sends an undefined value as NULL", async () => {
    expect(await db.sql.query(Prisma.sql`SELECT ${undefined}::text IS NULL AS is_null`)).toEqual([{ is_null: true }]);
  });

  it("is counted and timed with Prisma's statements", async () => {
    const { statements } = await db.countStatements(() => db.sql.query(Prisma.sql`SELECT 1 AS one`));
    expect(statements).toBe(1);
  });

  it("fails with PostgreSQL's SQLSTATE and message, so a unique violation is recognised as one", async () => {
    await db.sql.query(Prisma.sql`INSERT INTO direct_sql_keys (id) VALUES (${"once"}) RETURNING id`);
    const duplicate = await db.sql.query(Prisma.sql`INSERT INTO direct_sql_keys (id) VALUES (${"once"}) RETURNING id`).catch((error: unknown) => error);
    expect(duplicate).toBeInstanceOf(DatabaseStatementError);
    expect(duplicate).toMatchObject({ code: "23505", message: expect.stringContaining("direct_sql_keys_pkey") });
    expect(isUniqueViolation(duplicate)).toBe(true);
    await expect(db.sql.query(Prisma.sql`SELECT 1 / ${0}::int AS never`)).rejects.toMatchObject({ code: "22012", message: expect.stringContaining("division by zero") });
  });

  it("refuses a column it cannot give as $queryRaw does, naming it", async () => {
    await expect(db.sql.query(Prisma.sql`SELECT '\\x00ff'::bytea AS raw_bytes`)).rejects.toThrow(/column raw_bytes/);
  });

  it("gives the same when sent again as a prepared statement, with new parameters and after refusals of its own and of others", async () => {
    const statement = (id: string) => Prisma.sql`INSERT INTO direct_sql_keys (id) VALUES (${id}) RETURNING id, ${new Date("2026-01-02T03:04:05.678Z")}::timestamp(3) AS at`;
    expect(await db.sql.query(statement("first"))).toEqual([{ id: "first", at: new Date("2026-01-02T03:04:05.678Z") }]);
    expect(await db.sql.query(statement("second"))).toEqual([{ id: "second", at: new Date("2026-01-02T03:04:05.678Z") }]);
    await expect(db.sql.query(statement("second"))).rejects.toMatchObject({ code: "23505" });
    await expect(db.sql.query(statement("second"))).rejects.toMatchObject({ code: "23505" });
    expect(await db.sql.query(statement("third"))).toEqual([{ id: "third", at: new Date("2026-01-02T03:04:05.678Z") }]);
    await expect(db.sql.query(Prisma.sql`SELEC 1`)).rejects.toMatchObject({ code: "42601" });
    await expect(db.sql.query(Prisma.sql`SELEC 1`)).rejects.toMatchObject({ code: "42601" });
    const number = (value: string) => Prisma.sql`SELECT ${value}::int AS number`;
    expect(await db.sql.query(number("1"))).toEqual([{ number: 1 }]);
    await expect(db.sql.query(number("one"))).rejects.toMatchObject({ code: "22P02" });
    expect(await db.sql.query(statement("fourth"))).toEqual([{ id: "fourth", at: new Date("2026-01-02T03:04:05.678Z") }]);
  });

  it("is prepared once when the first calls of a text come together", async () => {
    const calls = Array.from({ length: 5 }, (_, n) => db.sql.query<{ n: number }>(Prisma.sql`SELECT ${n}::int AS n, 'together' AS text`));
    expect(await Promise.all(calls)).toEqual([0, 1, 2, 3, 4].map((n) => [{ n, text: "together" }]));
    const prepared = await db.sql.query<{ count: number }>(Prisma.sql`SELECT count(*)::int AS count FROM pg_prepared_statements WHERE statement LIKE '%''together''%' AND statement NOT LIKE '%pg_prepared_statements%'`);
    expect(prepared).toEqual([{ count: 1 }]);
  });

  it("waits for a transaction another caller has open, and never runs inside it", async () => {
    const seen = await db.prisma
      .$transaction(async (tx) => {
        await tx.$executeRaw`INSERT INTO direct_sql_keys (id) VALUES ('uncommitted')`;
        const direct = db.sql.query<{ seen: number }>(Prisma.sql`SELECT count(*)::int AS seen FROM direct_sql_keys WHERE id = ${"uncommitted"}`);
        // Statements of the transaction after it: on PGlite, one run inside the transaction would go in between them.
        for (let i = 0; i < 3; i++) await tx.$queryRaw`SELECT 1`;
        throw Object.assign(new Error("rolled back"), { direct });
      })
      .catch(async (error: { direct: Promise<{ seen: number }[]> }) => (await error.direct)[0]!.seen);
    expect(seen).toBe(0);
  });

  it("is prepared once per text, up to a bound, and the texts past it still run", async () => {
    for (let n = 0; n < 70; n++) expect(await db.sql.query(Prisma.sql([`SELECT ${n} AS n`]))).toEqual([{ n }]);
    // On PostgreSQL the statements one after another share the pool's last connection.
    const prepared = (await db.sql.query<{ statement: string }>(Prisma.sql`SELECT statement FROM pg_prepared_statements`)).map((row) => row.statement);
    expect(prepared).toContain("SELECT 0 AS n");
    expect(prepared).not.toContain("SELECT 69 AS n");
    expect(prepared.length).toBeLessThanOrEqual(64);
  });

  // Last in the file: it closes the test database's direct statements.
  it("is refused once the direct statements are closed, rather than connecting again", async () => {
    await db.sql.close();
    await expect(db.sql.query(Prisma.sql`SELECT 1 AS one`)).rejects.toThrow(/after the database closed/);
  });
});

describeWith(needsEmbedded())("PGlite's prepared statements", () => {
  let pglite: PGlite;
  let prepared: PGlite;
  beforeAll(async () => {
    pglite = await emptyEmbedded();
    prepared = withPreparedStatements(pglite);
  });
  afterAll(async () => {
    if (!pglite.closed) await pglite.close();
  });

  it("give what query() gives: rows in either mode, with PGlite's parsers and the caller's, and the rows a write changed", async () => {
    await pglite.exec(`CREATE TABLE prepared_rows (id int PRIMARY KEY, tags text[], doc jsonb, at timestamp(3), note text)`);
    const reset = () =>
      pglite.exec(`TRUNCATE prepared_rows; INSERT INTO prepared_rows VALUES (1, '{a,"b,c"}', '{"k": [1, null]}', '2026-01-02 03:04:05.678', NULL), (2, NULL, NULL, NULL, 'x')`);
    const statements: [string, unknown[], QueryOptions?][] = [
      ["INSERT INTO prepared_rows VALUES ($1, $2, $3, $4, NULL), ($5, NULL, NULL, NULL, 'x')", [3, ["a", "b,c"], { k: [1, null] }, new Date("2026-01-02T03:04:05.678Z"), 4]],
      ["SELECT * FROM prepared_rows ORDER BY id", []],
      ["SELECT * FROM prepared_rows ORDER BY id", [], { rowMode: "array" }],
      ["SELECT id, note FROM prepared_rows WHERE id > $1", [0], { rowMode: "array", parsers: { 23: (value: string) => `int ${value}` } }],
      ["UPDATE prepared_rows SET note = $1", ["y"]],
      ["SELECT id FROM prepared_rows WHERE false", []],
      ["DELETE FROM prepared_rows WHERE id = $1", [2]],
    ];
    for (const [text, params, options] of statements) {
      await reset();
      const expected = await pglite.query(text, params, options);
      // The first call prepares the statement, the second finds it prepared.
      for (let call = 0; call < 2; call++) {
        await reset();
        expect(await prepared.query(text, params, options)).toEqual(expected);
      }
    }
  });

  it("are prepared again when the schema changed under them or they were dropped", async () => {
    await pglite.exec(`CREATE FUNCTION prepared_columns() RETURNS TABLE (a int) LANGUAGE sql AS 'SELECT 1'`);
    const text = "SELECT * FROM prepared_columns()";
    expect((await prepared.query(text)).rows).toEqual([{ a: 1 }]);
    expect((await prepared.query(text)).rows).toEqual([{ a: 1 }]);
    await pglite.exec(`DROP FUNCTION prepared_columns(); CREATE FUNCTION prepared_columns() RETURNS TABLE (a int, b int) LANGUAGE sql AS 'SELECT 1, 2'`);
    expect((await prepared.query(text)).rows).toEqual([{ a: 1, b: 2 }]);
    await pglite.exec("DEALLOCATE ALL");
    expect((await prepared.query(text)).rows).toEqual([{ a: 1, b: 2 }]);
  });

  it("are refused once PGlite is closed, as its query() is", async () => {
    await pglite.close();
    await expect(prepared.query("SELECT 1")).rejects.toThrow(/closed/);
  });
});
