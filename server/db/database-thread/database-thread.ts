// The embedded database on a thread of its own (TOLLGATE_EMBEDDED_THREAD=worker):
// PGlite runs its WebAssembly PostgreSQL on the thread that calls it, so on the
// main thread every statement holds up the HTTP, JSON and socket work of every
// other request. Here the main thread keeps Prisma's client and the server,
// and hands each driver-adapter call to the thread (worker.ts) as one message.
// Transactions keep their meaning: the thread holds each open transaction,
// and PGlite's locks order the calls there as they would on one thread.
//
// If the thread dies (PGlite aborting, say), the calls it held fail, and the
// next call starts a new thread on the same folder: PostgreSQL recovers the
// folder to its last commit as it does after any crash.
import { MessageChannel, Worker, type MessagePort } from "node:worker_threads";
import {
  DriverAdapterError,
  type IsolationLevel,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
  type SqlQueryable,
  type Transaction,
  type TransactionOptions,
} from "@prisma/driver-adapter-utils";
import { log } from "../../log.ts";
import type { AdapterName, Call, CrossedError, Reply, ThreadOptions } from "./protocol.ts";

type CallWithoutId = Call extends infer C ? (C extends Call ? Omit<C, "id"> : never) : never;

/**
 * The thread's script: the bundle's own beside dist/server.mjs, else (from the
 * sources, under tsx or vitest) worker.ts with tsx's loader registered first.
 */
function startWorker(options: ThreadOptions, port: MessagePort): Worker {
  const here = import.meta.url;
  const workerData = { ...options, port };
  if (!here.endsWith(".ts")) return new Worker(new URL("./database-thread.mjs", here), { workerData, transferList: [port] });
  const source = JSON.stringify(new URL("./worker.ts", here).href);
  return new Worker(`import("tsx/esm/api").then(({ register }) => { register(); return import(${source}); })`, { eval: true, workerData, transferList: [port] });
}

/** As pglite-prisma-adapter names itself: Prisma treats the thread's adapters as that one. */
const ADAPTER_INFO = { provider: "postgres", adapterName: "pglite-prisma-adapter" } as const;

function errorOf(crossed: CrossedError): Error {
  if ("mapped" in crossed) return new DriverAdapterError(crossed.mapped);
  return Object.assign(new Error(crossed.message), { name: crossed.name, code: crossed.code });
}

/** Thrown to the calls a thread held when it died: their outcome is unknown, as a dropped connection's is. */
export class DatabaseThreadEndedError extends Error {
  constructor(reason: string) {
    super(`the embedded database's thread ended (${reason}); the statement's outcome is unknown`);
    this.name = "DatabaseThreadEndedError";
  }
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

export class DatabaseThread {
  #worker: Worker | undefined;
  #starting: Promise<Worker> | undefined;
  #port: MessagePort | undefined;
  #pending = new Map<number, Pending>();
  #lastId = 0;
  #closing = false;
  /** Bumped when a thread starts and when it ends: a transaction of a thread that ended is not looked for on the next. */
  #generation = 0;

  private constructor(private readonly options: ThreadOptions) {}

  /** Starts the thread and waits until its database is open. */
  static async open(options: ThreadOptions): Promise<DatabaseThread> {
    const thread = new DatabaseThread(options);
    await thread.#start();
    return thread;
  }

  #start(): Promise<Worker> {
    this.#starting ??= new Promise<Worker>((resolve, reject) => {
      const { port1, port2 } = new MessageChannel();
      const worker = startWorker(this.options, port2);
      const generation = ++this.#generation;
      let ready = false;
      port1.on("message", (reply: Reply) => {
        if (reply.id === 0) {
          ready = true;
          this.#worker = worker;
          this.#port = port1;
          resolve(worker);
          return;
        }
        this.#settle(reply);
      });
      // Called by "error" and then "exit": the first of them ends this thread's generation.
      const ended = (reason: string, error?: Error) => {
        port1.close();
        if (generation !== this.#generation) return;
        // The transactions this thread held end with it, before any new thread starts.
        this.#generation++;
        this.#worker = this.#port = this.#starting = undefined;
        if (!ready) reject(error ?? new DatabaseThreadEndedError(reason));
        for (const pending of this.#pending.values()) pending.reject(new DatabaseThreadEndedError(reason));
        this.#pending.clear();
        if (!this.#closing && ready) log.error(`the embedded database's thread ended (${reason}); the next statement starts it again`, error);
      };
      worker.on("error", (error) => ended(error.message, error));
      worker.on("exit", (code) => ended(`exit code ${code}`));
    });
    return this.#starting;
  }

  #settle(reply: Reply): void {
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    this.#pending.delete(reply.id);
    if (reply.error) pending.reject(errorOf(reply.error));
    else pending.resolve(reply.result);
  }

  async call<T>(message: CallWithoutId): Promise<T> {
    if (this.#closing) throw new Error("the embedded database is closed");
    if (!this.#worker) await this.#start();
    const port = this.#port!;
    const id = ++this.#lastId;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      port.postMessage({ ...message, id });
    });
  }

  /** A call in a transaction goes only to the thread that opened it: a new thread's numbers start again. */
  #inTransaction<T>(transaction: { generation: number } | undefined, message: CallWithoutId): Promise<T> {
    if (transaction && transaction.generation !== this.#generation) return Promise.reject(new DatabaseThreadEndedError("its transaction was open on a thread that ended"));
    return this.call<T>(message);
  }

  /** A Prisma driver adapter factory whose adapters run on the thread (`adapter`: Prisma's client's, or the direct statements'). */
  factory(adapter: AdapterName): SqlMigrationAwareDriverAdapterFactory {
    return {
      ...ADAPTER_INFO,
      connect: async () => this.#adapter(adapter),
      connectToShadowDb: () => Promise.reject(new Error("the embedded database's thread has no shadow database")),
    };
  }

  #adapter(adapter: AdapterName): SqlDriverAdapter {
    const queryable = (transaction?: { id: number; generation: number }): SqlQueryable => ({
      ...ADAPTER_INFO,
      queryRaw: (query) => this.#inTransaction(transaction, { adapter, method: "queryRaw", query, transaction: transaction?.id }),
      executeRaw: (query) => this.#inTransaction(transaction, { adapter, method: "executeRaw", query, transaction: transaction?.id }),
    });
    return {
      ...queryable(),
      executeScript: (script: string) => this.call<void>({ adapter, method: "executeScript", script }),
      getConnectionInfo: () => ({ supportsRelationJoins: true }),
      startTransaction: async (isolationLevel?: IsolationLevel): Promise<Transaction> => {
        const { transaction: id, options } = await this.call<{ transaction: number; options: TransactionOptions }>({ adapter, method: "startTransaction", isolationLevel });
        // The thread that answered is the current one: nothing runs between its reply and here.
        const transaction = { id, generation: this.#generation };
        return {
          ...queryable(transaction),
          options,
          commit: () => this.#inTransaction<void>(transaction, { adapter, method: "commit", transaction: id }),
          rollback: () => this.#inTransaction<void>(transaction, { adapter, method: "rollback", transaction: id }),
        };
      },
      dispose: () => Promise.resolve(),
    };
  }

  /** Closes the database, then ends the thread. */
  async close(): Promise<void> {
    if (this.#closing) return;
    const worker = this.#worker;
    if (worker) await this.call({ method: "close" }).catch(() => undefined);
    this.#closing = true;
    await worker?.terminate();
  }

  /** Ends the thread as a crash would (tests). */
  async kill(): Promise<void> {
    await this.#worker?.terminate();
  }
}
