// The embedded database on a thread of its own (TOLLGATE_EMBEDDED_THREAD=worker,
// server/db/database-thread/): Prisma's client and the direct statements
// reach PGlite there; transactions keep their meaning (a statement outside an
// open transaction waits for it, as on one thread); and a thread that dies
// fails the calls it held, then starts again on the same folder with every
// committed row, a transaction it held refused rather than half-committed.
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pgliteOptions } from "../server/db/client.ts";
import { DatabaseThread, DatabaseThreadEndedError } from "../server/db/database-thread/database-thread.ts";
import { directSql, type DirectSql } from "../server/db/direct-sql.ts";
import { createEmbeddedDatabase } from "../server/db/embedded-folder.ts";
import { Prisma, PrismaClient } from "../server/db/generated/client.ts";
import { agentSdk, operatorClient } from "./clients.ts";
import { AGENT_KEY } from "./harness.ts";
import { callHttp, startTestServer, type TestServer } from "./server.ts";

describe("embedded database on its own thread", () => {
  // As openDatabase opens it with TOLLGATE_EMBEDDED_THREAD=worker, with the thread at hand to kill.
  let thread: DatabaseThread;
  const database = {} as { prisma: PrismaClient; sql: DirectSql };
  beforeAll(async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "tollgate-thread-"));
    const { startParams } = pgliteOptions(8);
    await createEmbeddedDatabase(dataDir, startParams);
    thread = await DatabaseThread.open({ dataDir, startParams });
    database.prisma = new PrismaClient({ adapter: thread.factory("prisma") });
    database.sql = directSql(thread.factory("direct"));
    await database.prisma.$executeRawUnsafe("CREATE TABLE counter (id int PRIMARY KEY, value int NOT NULL)");
    await database.prisma.$executeRawUnsafe("INSERT INTO counter VALUES (1, 0)");
  }, 60_000);
  afterAll(async () => {
    await database.prisma?.$disconnect();
    await thread?.close();
  });

  const value = async () => (await database.sql.query<{ value: number }>(Prisma.sql`SELECT value FROM counter WHERE id = 1`))[0]!.value;

  it("database thread: Prisma's client and the direct statements answer from it, database errors as on the main thread", async () => {
    const [row] = await database.prisma.$queryRaw<{ answer: number; at: Date }[]>`SELECT 42 AS answer, now() AS at`;
    expect(row!.answer).toBe(42);
    expect(row!.at).toBeInstanceOf(Date);
    expect(await value()).toBe(0);
    await expect(database.prisma.$executeRawUnsafe("INSERT INTO counter VALUES (1, 0)")).rejects.toMatchObject({ code: "P2010", meta: { driverAdapterError: { cause: { kind: "UniqueConstraintViolation", originalCode: "23505" } } } });
  });

  /**
   * A transaction that adds `add` to the counter and then stays open, running
   * `whileOpen` in it, until `release()`; `written` resolves once it has added.
   */
  function heldTransaction(add: number, whileOpen: (tx: Prisma.TransactionClient) => Promise<unknown> = async () => undefined) {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let added!: () => void;
    const written = new Promise<void>((resolve) => (added = resolve));
    const done = database.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`UPDATE counter SET value = value + ${add} WHERE id = 1`;
      added();
      await released;
      await whileOpen(tx);
    });
    return { written, release, done };
  }

  it("database thread: a statement outside an open transaction waits for its commit and reads what it wrote", async () => {
    let outside: number | undefined;
    let answeredBeforeTheTransactionsNext: boolean | undefined;
    const held = heldTransaction(1, async (tx) => {
      // Sent after the read outside: the thread takes messages in order, so an unlocked read would be answered first.
      await tx.$queryRaw`SELECT 1`;
      answeredBeforeTheTransactionsNext = outside !== undefined;
    });
    await held.written;
    const read = value().then((seen) => (outside = seen));
    // Every microtask of the read's path has run: its message is on the thread before the transaction's next.
    await new Promise((resolve) => setImmediate(resolve));
    held.release();
    await held.done;
    await read;
    expect(answeredBeforeTheTransactionsNext).toBe(false);
    expect(outside).toBe(1);
  });

  it("database thread: one that dies fails the calls it held, refuses its open transaction, and starts again with every committed row", async () => {
    const before = await value();
    const held = heldTransaction(100, (tx) => tx.$executeRaw`UPDATE counter SET value = value + 100 WHERE id = 1`);
    await held.written;
    const waiting = value();
    await thread.kill();
    await expect(waiting).rejects.toBeInstanceOf(DatabaseThreadEndedError);
    held.release();
    await expect(held.done).rejects.toThrow(/thread ended/);
    // A new thread on the same folder: the open transaction's write is gone, the committed rows are there.
    expect(await value()).toBe(before);
    await database.prisma.$executeRaw`UPDATE counter SET value = value + 1 WHERE id = 1`;
    expect(await value()).toBe(before + 1);
  });
});

describe("a server with TOLLGATE_EMBEDDED_THREAD=worker", () => {
  let test: TestServer;
  beforeAll(async () => {
    test = await startTestServer({ TOLLGATE_EMBEDDED_THREAD: "worker" });
  }, 60_000);
  afterAll(() => test?.close());

  it("database thread: a server on it gates a call end to end, over plain HTTP's long-poll and the SDK, and keeps it after a restart", async () => {
    const operator = await operatorClient(test.url);
    const sdk = agentSdk(test.url);
    const { sessionId } = await sdk.openSession({});
    const begun = await sdk.begin({ sessionId, agent: "mailer" });
    const asked = await sdk.call("approval.request", { requestId: begun.requestId, tool: "send_email", args: { to: "a@example.com" } });
    const waiting = callHttp(test.url, "approval.await", "query", { approvalId: asked.approvalId, timeoutMs: 20_000 }, { authorization: `Bearer ${AGENT_KEY}` });
    await operator.approval.decide.mutate({ approvalId: asked.approvalId, action: "approve" });
    const answered = await waiting;
    expect(answered.status).toBe(200);
    expect(answered.body.result.data).toMatchObject({ status: "APPROVED" });

    test = await test.restart();
    const afterRestart = await operatorClient(test.url);
    expect(await afterRestart.approval.get.query({ approvalId: asked.approvalId })).toMatchObject({ status: "APPROVED" });
  });
});
