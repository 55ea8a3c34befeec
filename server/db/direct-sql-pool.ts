// The direct statements on a PostgreSQL server, sent over the server's pool
// with `pg` itself rather than through Prisma's driver adapter. The adapter
// costs 30 µs of CPU a statement on a 2-core machine (a debug line whose
// check splits and compiles patterns at each call, a parser looked up per
// column, each value converted twice) and a hot call is one statement.
// Parameters go out and rows come back as $queryRaw sends and gives them
// (test/direct-sql.test.ts holds the two to each other on PostgreSQL); each
// text is a prepared statement on each connection, up to a bound.
import pg from "pg";
import { Prisma } from "./generated/client.ts";
import { DatabaseStatementError, isoTextOf, type DirectSql } from "./direct-sql.ts";
import { preparedStatementNames } from "./prepared-statements.ts";
import { timedStatement, type StatementListener } from "./timed-adapter.ts";

type Decoder = (text: string) => unknown;

const builtIn = (oid: number): Decoder => pg.types.getTypeParser(oid, "text") as Decoder;
const asText: Decoder = (text) => text;

/**
 * The columns a direct statement may return, by type OID, each decoded to
 * what $queryRaw gives: 64-bit integers as BigInt, numerics as Decimal, times
 * as Date (a timestamp is UTC, and a timestamptz's offset is read as UTC, as
 * Prisma's adapter reads both), JSON parsed, and arrays of the simple types.
 */
const DECODERS = new Map<number, Decoder>([
  [16, builtIn(16)], // boolean
  [20, (text) => BigInt(text)], // int8
  [21, builtIn(21)], // int2
  [23, builtIn(23)], // int4
  [26, (text) => BigInt(text)], // oid
  [700, builtIn(700)], // float4
  [701, builtIn(701)], // float8
  [1700, (text) => new Prisma.Decimal(text)], // numeric
  [1082, (text) => new Date(text)], // date
  [1114, (text) => new Date(`${text.replace(" ", "T")}+00:00`)], // timestamp
  [1184, (text) => new Date(text.replace(" ", "T").replace(/[+-]\d{2}(:\d{2})?$/, "+00:00"))], // timestamptz
  [114, (text) => JSON.parse(text)], // json
  [3802, (text) => JSON.parse(text)], // jsonb
  [18, asText], // "char"
  [19, asText], // name
  [25, asText], // text
  [1042, asText], // char(n)
  [1043, asText], // varchar
  [2950, asText], // uuid
  [1000, builtIn(1000)], // boolean[]
  [1002, builtIn(1002)], // "char"[]
  [1005, builtIn(1005)], // int2[]
  [1007, builtIn(1007)], // int4[]
  [1009, builtIn(1009)], // text[]
  [1014, builtIn(1014)], // char(n)[]
  [1015, builtIn(1015)], // varchar[]
  [2951, builtIn(2951)], // uuid[]
]);

/** Types of the database's own (enums, as their labels). */
const FIRST_USER_TYPE_OID = 16384;

const types = { getTypeParser: (oid: number) => DECODERS.get(oid) ?? asText };

/** A value as `pg` should send it for $queryRaw's text of it. */
function parameterOf(value: unknown, index: number): unknown {
  if (value === undefined || value === null) return null;
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Date) return isoTextOf(value, index);
  if (Array.isArray(value)) return value.map((item) => parameterOf(item, index));
  if (Prisma.Decimal.isDecimal(value)) return (value as Prisma.Decimal).toJSON();
  if (value instanceof Uint8Array || value instanceof ArrayBuffer) return Buffer.from(value as Uint8Array);
  if (typeof value === "object") return JSON.stringify(value);
  return value;
}

/** Direct statements over `pool`, timed and traced as Prisma's are, reported to whatever `listener()` returns at the time. */
export function directSqlOnPool(pool: pg.Pool, listener: () => StatementListener | undefined = () => undefined): DirectSql {
  const nameOf = preparedStatementNames();
  let closed = false;
  return {
    async query<Row>(statement: Prisma.Sql): Promise<Row[]> {
      // As the adapter's: the pool's owner closes it, and nothing is sent after close().
      if (closed) throw new Error("a direct statement was sent after the database closed");
      const sql = statement.text;
      const values = statement.values.map(parameterOf);
      const name = nameOf({ sql }) || undefined;
      let result: pg.QueryResult;
      try {
        result = await timedStatement(listener, "query", false, () => pool.query({ name, text: sql, values, types }));
      } catch (error) {
        throw error instanceof pg.DatabaseError ? new DatabaseStatementError(error.message, error.code, error) : error;
      }
      for (const field of result.fields) {
        if (!DECODERS.has(field.dataTypeID) && field.dataTypeID < FIRST_USER_TYPE_OID) {
          throw new Error(`a direct statement cannot return column ${field.name} (type OID ${field.dataTypeID}); cast it in the SQL or use $queryRaw`);
        }
      }
      return result.rows as Row[];
    },
    async close() {
      closed = true;
    },
  };
}
