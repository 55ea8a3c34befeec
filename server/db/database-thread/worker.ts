// The embedded database's thread: PGlite and its two Prisma driver adapters,
// answering the server's main thread one message per call (protocol.ts).
// PGlite's own locks order the calls here as they order them on one thread: a
// statement outside a transaction waits for the open one to end.
import { workerData, type MessagePort } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import { isDriverAdapterError, type SqlDriverAdapter, type Transaction } from "@prisma/driver-adapter-utils";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { withPreparedStatements } from "../prepared-statements.ts";
import type { AdapterName, Call, CrossedError, Reply, ThreadOptions } from "./protocol.ts";

const { dataDir, startParams, port } = workerData as ThreadOptions & { port: MessagePort };

const pglite = await PGlite.create(dataDir, { startParams });
const adapters: Record<AdapterName, SqlDriverAdapter> = {
  prisma: await new PrismaPGlite(pglite).connect(),
  direct: await new PrismaPGlite(withPreparedStatements(pglite)).connect(),
};
const transactions = new Map<number, Transaction>();
let lastTransaction = 0;

function crossed(error: unknown): CrossedError {
  if (isDriverAdapterError(error)) return { mapped: error.cause };
  const { message = String(error), name = "Error", code } = error as { message?: string; name?: string; code?: string };
  return { message, name, code };
}

function transactionOf(id: number): Transaction {
  const transaction = transactions.get(id);
  if (!transaction) throw new Error(`transaction ${id} is not open on the database thread`);
  return transaction;
}

async function answer(call: Call): Promise<unknown> {
  switch (call.method) {
    case "queryRaw":
    case "executeRaw": {
      const queryable = call.transaction === undefined ? adapters[call.adapter] : transactionOf(call.transaction);
      return call.method === "queryRaw" ? queryable.queryRaw(call.query) : queryable.executeRaw(call.query);
    }
    case "executeScript":
      return adapters[call.adapter].executeScript(call.script);
    case "startTransaction": {
      const transaction = await adapters[call.adapter].startTransaction(call.isolationLevel);
      transactions.set(++lastTransaction, transaction);
      return { transaction: lastTransaction, options: transaction.options };
    }
    case "commit":
    case "rollback": {
      const transaction = transactionOf(call.transaction);
      transactions.delete(call.transaction);
      return call.method === "commit" ? transaction.commit() : transaction.rollback();
    }
    case "close":
      await pglite.close();
      return undefined;
  }
}

function receive(call: Call): void {
  answer(call).then(
    (result) => port.postMessage({ id: call.id, result } satisfies Reply),
    (error: unknown) => port.postMessage({ id: call.id, error: crossed(error) } satisfies Reply),
  );
}

port.on("message", receive);
port.postMessage({ id: 0, result: "ready" } satisfies Reply);
