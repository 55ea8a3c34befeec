// The messages between the server's main thread and the embedded database's
// thread (database-thread.ts, worker.ts): Prisma's driver adapter interface,
// which is data in and data out (statements with their arguments, rows of
// plain values), so a call crosses as one structured-clone message each way.
import type { IsolationLevel, MappedError, SqlQuery } from "@prisma/driver-adapter-utils";

/** The two adapters over the one database: Prisma's client's, and the direct statements' (prepared, prepared-statements.ts). */
export type AdapterName = "prisma" | "direct";

export type Call =
  | { id: number; adapter: AdapterName; method: "queryRaw" | "executeRaw"; query: SqlQuery; transaction?: number }
  | { id: number; adapter: AdapterName; method: "executeScript"; script: string }
  | { id: number; adapter: AdapterName; method: "startTransaction"; isolationLevel?: IsolationLevel }
  | { id: number; adapter: AdapterName; method: "commit" | "rollback"; transaction: number }
  | { id: number; method: "close" };

/** An error as it crosses: the adapter's mapped database error, or another error's message, name and code. */
export type CrossedError = { mapped: MappedError } | { message: string; name: string; code?: string };

export type Reply = { id: number; result?: unknown; error?: CrossedError };

/** What the thread is started with (workerData). */
export interface ThreadOptions {
  dataDir: string;
  startParams: string[];
}
