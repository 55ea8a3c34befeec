// Times every statement Prisma sends through a driver adapter (in and out of
// transactions), and each direct statement, for the database metrics, and
// makes it a span when tracing is on. The adapter itself is unchanged: this
// only wraps queryRaw and executeRaw with a clock.
import { inStatementSpan } from "../observability/tracing.ts";
import type { SqlDriverAdapter, SqlDriverAdapterFactory, SqlQueryable, Transaction } from "@prisma/driver-adapter-utils";

export type StatementListener = (kind: "query" | "execute", seconds: number, inTransaction: boolean) => void;

/**
 * BEGIN, COMMIT and ROLLBACK reach executeRaw on some adapters (Prisma sends
 * COMMIT itself over pg) and not on others (PGlite): they are left out
 * everywhere, so what is reported is a use case's own statements.
 */
const TRANSACTION_CONTROL = /^\s*(BEGIN|COMMIT|ROLLBACK)\s*;?\s*$/i;

/**
 * Runs one statement on the clock, reported to the listener there was when it
 * began, and inside a span when tracing is on.
 */
export async function timedStatement<R>(listener: () => StatementListener | undefined, kind: "query" | "execute", inTransaction: boolean, run: () => Promise<R>): Promise<R> {
  const report = listener();
  const started = process.hrtime.bigint();
  try {
    return await inStatementSpan(kind, inTransaction, run);
  } finally {
    report?.(kind, Number(process.hrtime.bigint() - started) / 1e9, inTransaction);
  }
}

function timed<T extends SqlQueryable>(queryable: T, listener: () => StatementListener | undefined, inTransaction: boolean): T {
  const queryRaw = queryable.queryRaw.bind(queryable);
  const executeRaw = queryable.executeRaw.bind(queryable);
  queryable.queryRaw = (params) => timedStatement(listener, "query", inTransaction, () => queryRaw(params));
  queryable.executeRaw = (params) => (TRANSACTION_CONTROL.test(params.sql) ? executeRaw(params) : timedStatement(listener, "execute", inTransaction, () => executeRaw(params)));
  return queryable;
}

/** The factory, with every connection's statements reported to whatever `listener()` returns at the time. */
export function timedAdapterFactory<F extends SqlDriverAdapterFactory>(factory: F, listener: () => StatementListener | undefined): F {
  const connect = factory.connect.bind(factory);
  factory.connect = async (): Promise<SqlDriverAdapter> => {
    const adapter = timed(await connect(), listener, false);
    const startTransaction = adapter.startTransaction.bind(adapter);
    adapter.startTransaction = async (isolationLevel): Promise<Transaction> => timed(await startTransaction(isolationLevel), listener, true);
    return adapter;
  };
  return factory;
}
