// The direct statements (direct-sql.ts) are a handful of texts sent thousands
// of times, so each text is parsed and analyzed once per connection, as a
// named prepared statement, not at every call.
//
// On PGlite this also saves calls into PostgreSQL's WebAssembly: query()
// sends a statement as six protocol messages, each its own call in and out
// (parse, describe the statement, bind, describe the portal, execute, sync),
// where a prepared statement is one batch (bind, execute, sync) in one call,
// its columns described once, when it is prepared. On a 2-core machine a
// one-row SELECT by key took 320 µs through query() and 45 as a prepared batch.
import { MemoryFS, parse, protocol, type messages, type PGlite, type QueryOptions, type Results } from "@electric-sql/pglite";
import { NodeFS } from "@electric-sql/pglite/nodefs";

/** Texts prepared at most; the texts beyond them are parsed at each call, as before. */
const MAX_PREPARED = 64;

// Names unique in the process, so that two namers of one pool, or two wrappers of one PGlite, never clash.
let named = 0;
const nextName = () => `tollgate_prepared_${++named}`;

/**
 * A name per statement text, under which `pg` prepares the statement once on
 * each connection (direct-sql-pool.ts). The empty name, given past the bound,
 * is PostgreSQL's unnamed statement.
 */
export function preparedStatementNames(): (query: { sql: string }) => string {
  const names = new Map<string, string>();
  return ({ sql }) => {
    let name = names.get(sql);
    if (name === undefined && names.size < MAX_PREPARED) names.set(sql, (name = nextName()));
    return name ?? "";
  };
}

type Field = { name: string; dataTypeID: number };

interface Prepared {
  name: string;
  /** The parameters' types as PostgreSQL inferred them, which pick each value's serializer (as query() does). */
  parameterTypes: number[];
  /** Its result's columns, as PostgreSQL described the statement (none for a statement without rows). */
  fields: Field[];
}

const { serialize } = protocol;

/** What PostgreSQL answers when a prepared statement no longer fits the schema (a function or table changed under it) or was dropped. */
const STALE_STATEMENT = new Set(["0A000", "26000"]);


/** The rows a statement changed, from its command tag, as PGlite counts them. */
function affectedRows(commandTag: string): number {
  const [command, first, second] = commandTag.split(" ");
  if (command === "INSERT") return Number.parseInt(second!, 10);
  return command === "UPDATE" || command === "DELETE" || command === "COPY" || command === "MERGE" ? Number.parseInt(first!, 10) : 0;
}

/**
 * A statement's result read off its messages, as PGlite's parseResults reads
 * it. That copies every parser PGlite has (316, with the array types') into a
 * new object at each call, which took 110 µs on a 2-core machine, more than
 * the statement itself; here a column's parser is looked up where it is needed.
 */
function resultOf<T>(pglite: PGlite, fields: Field[], answer: messages.BackendMessage[], options?: QueryOptions): Results<T> {
  const rows: unknown[] = [];
  let changed = 0;
  const parsed = (value: string | null, index: number) => {
    if (value === null) return null;
    const type = fields[index]!.dataTypeID;
    const parser = options?.parsers?.[type] ?? pglite.parsers[type];
    return parser ? parser(value, type) : value;
  };
  for (const message of answer) {
    if (message.name === "dataRow") {
      const values = (message as messages.DataRowMessage).fields.map(parsed);
      rows.push(options?.rowMode === "array" ? values : Object.fromEntries(values.map((value, index) => [fields[index]!.name, value])));
    } else if (message.name === "commandComplete") {
      changed += affectedRows((message as messages.CommandCompleteMessage).text);
    }
  }
  return { rows, fields, affectedRows: changed } as Results<T>;
}

function batch(messages: Uint8Array[]): Uint8Array {
  const buffer = new Uint8Array(messages.reduce((length, message) => length + message.length, 0));
  let offset = 0;
  for (const message of messages) {
    buffer.set(message, offset);
    offset += message.length;
  }
  return buffer;
}

/** The columns a statement's description names. */
function fieldsOf(described: messages.BackendMessage[]): Field[] {
  const columns = described.find((message): message is messages.RowDescriptionMessage => message.name === "rowDescription");
  return columns ? columns.fields.map(({ name, dataTypeID }) => ({ name, dataTypeID })) : [];
}

/**
 * `pglite`, whose query() sends each statement text it has seen before as one
 * batch of a prepared statement. Its rows and its errors' codes and fields are
 * query()'s, and it waits as query() does: for a transaction another caller
 * has open (PGlite's transaction lock, then its query lock), and it is synced
 * to the folder after it where the filesystem needs that. A statement the
 * schema changed under is prepared again. Everything else (sql, exec,
 * transaction and the statements in a transaction) is PGlite's own.
 */
export function withPreparedStatements(pglite: PGlite): PGlite {
  const prepared = new Map<string, Prepared>();
  // A folder (NodeFS) is written as PostgreSQL writes, and memory is the store
  // itself: their sync does nothing, but PGlite still takes a lock to do it.
  const syncToFs = !(pglite.fs instanceof NodeFS || pglite.fs instanceof MemoryFS);

  async function prepare(text: string): Promise<Prepared> {
    const name = nextName();
    const { messages } = await pglite.execProtocol(batch([serialize.parse({ name, text }), serialize.describe({ type: "S", name }), serialize.sync()]), { syncToFs: false });
    const statement = { name, parameterTypes: parse.parseDescribeStatementResults(messages), fields: fieldsOf(messages) };
    prepared.set(text, statement);
    return statement;
  }

  async function run<T>(statement: Prepared, params: unknown[], options?: QueryOptions): Promise<Results<T>> {
    const values = params.map((param, index) => {
      if (param === null || param === undefined) return null;
      const type = statement.parameterTypes[index]!;
      const serializer = options?.serializers?.[type] ?? pglite.serializers[type];
      return serializer ? serializer(param) : String(param);
    });
    const { messages } = await pglite.execProtocol(batch([serialize.bind({ statement: statement.name, values }), serialize.execute({}), serialize.sync()]), { syncToFs });
    return resultOf<T>(pglite, statement.fields, messages, options);
  }

  async function runPrepared<T>(text: string, params: unknown[], options?: QueryOptions): Promise<Results<T>> {
    // Looked up behind the locks: a call of the same text queued ahead may have prepared it.
    const known = prepared.get(text);
    try {
      return await run<T>(known ?? (await prepare(text)), params, options);
    } catch (error) {
      if (!known || !STALE_STATEMENT.has((error as { code?: string }).code ?? "")) throw error;
      prepared.delete(text);
      await pglite.execProtocol(batch([serialize.close({ type: "S", name: known.name }), serialize.sync()]), { syncToFs: false });
      return run<T>(await prepare(text), params, options);
    }
  }

  async function query<T>(text: string, params: unknown[] = [], options?: QueryOptions): Promise<Results<T>> {
    if (!prepared.has(text) && prepared.size >= MAX_PREPARED) return pglite.query<T>(text, params, options);
    // As query(): a closed database is refused here, not sent a statement.
    await pglite._checkReady();
    return pglite._runExclusiveTransaction(() => pglite._runExclusiveQuery(() => runPrepared<T>(text, params, options)));
  }

  return new Proxy(pglite, {
    get(target, property) {
      if (property === "query") return query;
      const value: unknown = Reflect.get(target, property, target);
      // PGlite's methods read its private fields, which only the instance itself has.
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
