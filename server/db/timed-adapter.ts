// Times every statement Prisma sends through a driver adapter (in and out of
// transactions), for the database metrics. The adapter itself is unchanged:
// this only wraps queryRaw and executeRaw with a clock.
import type { SqlDriverAdapter, SqlDriverAdapterFactory, SqlQueryable, Transaction } from "@prisma/driver-adapter-utils";

export type StatementListener = (kind: "query" | "execute", seconds: number, inTransaction: boolean) => void;

function timed<T extends SqlQueryable>(queryable: T, listener: () => StatementListener | undefined, inTransaction: boolean): T {
  const queryRaw = queryable.queryRaw.bind(queryable);
  const executeRaw = queryable.executeRaw.bind(queryable);
  const clock = async <R>(kind: "query" | "execute", run: () => Promise<R>): Promise<R> => {
    const started = process.hrtime.bigint();
    try {
      return await run();
    } finally {
      listener()?.(kind, Number(process.hrtime.bigint() - started) / 1e9, inTransaction);
    }
  };
  queryable.queryRaw = (params) => clock("query", () => queryRaw(params));
  queryable.executeRaw = (params) => clock("execute", () => executeRaw(params));
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
