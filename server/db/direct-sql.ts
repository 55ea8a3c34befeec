// The engine's hot statements (one SQL function call per use case), sent
// without Prisma's client around each call, with the same statement timing and
// tracing as Prisma's (timed-adapter.ts). Rows come back as $queryRaw gives
// them. On PGlite (here) they go to a driver adapter of the kind Prisma itself
// uses, over the same PGlite instance, which prepares each statement once
// (prepared-statements.ts); on PostgreSQL to `pg` over the server's pool
// (direct-sql-pool.ts). A $queryRaw costs about 0.1 ms of the server's CPU
// more than the statement's own driver work (building the query plan and
// serialising and parsing its parameters and rows), a tenth of a
// one-statement call's time in the server.
import { ColumnTypeEnum, isDriverAdapterError, type ArgType, type ColumnType, type SqlDriverAdapter, type SqlDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import { Prisma } from "./generated/client.ts";

export interface DirectSql {
  /** Runs one statement (written with Prisma.sql) outside any transaction and returns its rows. */
  query<Row>(statement: Prisma.Sql): Promise<Row[]>;
  /** Lets the adapter go (a pool the factory was given stays open). */
  close(): Promise<void>;
}

/**
 * A statement refused by the database, with PostgreSQL's SQLSTATE as its code
 * (as Prisma's P2010 carries it in its meta): the retry of deadlocks and the
 * input errors read either.
 */
export class DatabaseStatementError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    cause?: unknown,
  ) {
    // The adapter's error, with PostgreSQL's detail, hint and constraint, stays as the cause for the log.
    super(message, { cause });
    this.name = "DatabaseStatementError";
  }
}

/** A Date parameter as ISO text; an invalid one is refused before it is sent, as $queryRaw refuses it. */
export function isoTextOf(date: Date, index: number): string {
  if (Number.isNaN(date.getTime())) throw new TypeError(`parameter ${index + 1} of a direct statement is an invalid Date`);
  return date.toISOString();
}

/** A parameter as Prisma's $queryRaw hands it to the adapter: its value and the type it names. */
interface Parameter {
  value: unknown;
  scalarType: ArgType["scalarType"];
}

/**
 * Serialises a parameter as $queryRaw does (its serializeRawParameters): 64-bit
 * integers and decimals as text of their type, times as ISO text (an invalid
 * one refused before it is sent), bytes as base64, other objects as JSON.
 */
function parameterOf(value: unknown, index: number): Parameter {
  if (typeof value === "bigint") return { value: value.toString(), scalarType: "bigint" };
  if (value instanceof Date) return { value: isoTextOf(value, index), scalarType: "datetime" };
  if (Prisma.Decimal.isDecimal(value)) return { value: (value as Prisma.Decimal).toJSON(), scalarType: "decimal" };
  if (value instanceof Uint8Array || value instanceof ArrayBuffer) return { value: Buffer.from(value as Uint8Array).toString("base64"), scalarType: "bytes" };
  if (typeof value === "object" && value !== null) return { value: JSON.stringify(value), scalarType: "unknown" };
  return { value, scalarType: typeof value === "number" ? "decimal" : typeof value === "string" ? "string" : "unknown" };
}

/** The adapter's arguments and their types for a statement's values (a list's type is its first element's). */
function argumentsOf(values: unknown[]): { args: unknown[]; argTypes: ArgType[] } {
  const args: unknown[] = [];
  const argTypes: ArgType[] = [];
  values.forEach((value, index) => {
    if (Array.isArray(value)) {
      const items = value.map((item) => parameterOf(item, index));
      args.push(items.map((item) => item.value));
      argTypes.push({ scalarType: items[0]?.scalarType ?? "unknown", arity: "list" });
    } else {
      const { value: arg, scalarType } = parameterOf(value, index);
      args.push(arg);
      argTypes.push({ scalarType, arity: "scalar" });
    }
  });
  return { args, argTypes };
}

/** A column's value as $queryRaw gives it, from the adapter's (text for 64-bit integers, numbers, times and JSON). */
function decoderOf(type: ColumnType, column: string): ((value: unknown) => unknown) | undefined {
  switch (type) {
    case ColumnTypeEnum.Int64:
      return (value) => BigInt(value as string);
    case ColumnTypeEnum.Numeric:
      return (value) => new Prisma.Decimal(value as string);
    case ColumnTypeEnum.DateTime:
    case ColumnTypeEnum.Date:
      return (value) => new Date(value as string);
    case ColumnTypeEnum.Json:
      return (value) => JSON.parse(value as string);
    case ColumnTypeEnum.Int32:
    case ColumnTypeEnum.Float:
    case ColumnTypeEnum.Double:
    case ColumnTypeEnum.Boolean:
    case ColumnTypeEnum.Character:
    case ColumnTypeEnum.Text:
    case ColumnTypeEnum.Enum:
    case ColumnTypeEnum.Uuid:
    case ColumnTypeEnum.TextArray:
    case ColumnTypeEnum.CharacterArray:
    case ColumnTypeEnum.EnumArray:
    case ColumnTypeEnum.Int32Array:
    case ColumnTypeEnum.BooleanArray:
    case ColumnTypeEnum.UuidArray:
      return undefined;
    default:
      throw new Error(`a direct statement cannot return column ${column} (the driver's column type ${type}); cast it in the SQL or use $queryRaw`);
  }
}

function databaseError(error: unknown): unknown {
  if (!isDriverAdapterError(error)) return error;
  const { cause } = error;
  const message = cause.originalMessage ?? ("message" in cause && typeof cause.message === "string" ? cause.message : error.message);
  return new DatabaseStatementError(message, cause.originalCode ?? ("code" in cause && typeof cause.code === "string" ? cause.code : undefined), error);
}

/** Direct statements over one adapter of `factory`, connected at the first statement. */
export function directSql(factory: SqlDriverAdapterFactory): DirectSql {
  let adapter: Promise<SqlDriverAdapter> | undefined;
  let closed = false;
  return {
    async query<Row>(statement: Prisma.Sql): Promise<Row[]> {
      // Connecting again after close() would open a pool nothing ends.
      if (closed) throw new Error("a direct statement was sent after the database closed");
      const { args, argTypes } = argumentsOf(statement.values);
      let result;
      try {
        adapter ??= factory.connect().catch((error: unknown) => {
          adapter = undefined;
          throw error;
        });
        result = await (await adapter).queryRaw({ sql: statement.text, args, argTypes });
      } catch (error) {
        throw databaseError(error);
      }
      const { columnNames, columnTypes, rows } = result;
      const decoders = columnTypes.map((type, index) => decoderOf(type, columnNames[index]!));
      return rows.map((values) => {
        const row: Record<string, unknown> = {};
        for (let index = 0; index < columnNames.length; index++) {
          const value = values[index];
          const decode = decoders[index];
          row[columnNames[index]!] = value === null || decode === undefined ? value : decode(value);
        }
        return row as Row;
      });
    },
    async close() {
      closed = true;
      const connected = adapter;
      adapter = undefined;
      if (connected) await (await connected).dispose();
    },
  };
}
