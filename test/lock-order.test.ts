// The global lock order (server/services/locks.ts) on PostgreSQL, where
// transactions really run at once: use cases that touch the same call chain,
// raced in pairs, never deadlock. PGlite runs one transaction at a time, so
// these races cannot happen there and the file is skipped on it.
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { directSqlOnPool } from "../server/db/direct-sql-pool.ts";
import { PrismaClient } from "../server/db/generated/client.ts";
import { EventBus } from "../server/events/bus.ts";
import { createServiceDeps, type ServiceDeps } from "../server/services/deps.ts";
import { ATTEMPTS } from "../server/services/transaction.ts";
import { queryOnce } from "./databases.ts";
import { unchainedEndings } from "./unchained-endings.ts";
import { agentCaller, operatorCaller, useFreshApp, type TestApp, type TestDatabase } from "./harness.ts";
import { describeWith, needsPostgres } from "./requires.ts";

let db: TestDatabase;
let app: TestApp;
useFreshApp((created) => (db = created), (fresh) => (app = fresh));

const ROUNDS = 20;

/** The database's deadlock count, read from a new connection after the racers' connections closed. */
async function deadlocks(url: string): Promise<number> {
  const [row] = await queryOnce<{ deadlocks: string }>(url, "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()");
  return Number(row!.deadlocks);
}

/**
 * Runs `race` against its own connection pool and returns how many deadlocks
 * PostgreSQL detected meanwhile. A backend reports its statistics when it
 * exits, so the pool is closed (and its backends gone) before counting.
 */
async function deadlocksDuring(url: string, race: (deps: ServiceDeps) => Promise<void>): Promise<number> {
  const before = await deadlocks(url);
  // The test app's own connections stay; the racers' are the ones opened from here on.
  const stay = await clientBackends(url);
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  const adapter = new PrismaPg(pool);
  const prisma = new PrismaClient({ adapter });
  const sql = directSqlOnPool(pool);
  const deps = createServiceDeps({ prisma, sql }, new EventBus());
  await deps.receipts.ready();
  try {
    await race(deps);
  } finally {
    await prisma.$disconnect();
    await sql.close();
    await pool.end();
  }
  // Backends flush their counters as they exit; wait until every racer has gone.
  await untilBackends(url, `pid <> pg_backend_pid() AND backend_type = 'client backend' AND NOT (pid = ANY('{${stay.join(",")}}'::int[]))`, (count) => count === 0);
  return (await deadlocks(url)) - before;
}

/** The pids of this database's client backends, the asking one's excepted. */
async function clientBackends(url: string): Promise<number[]> {
  const rows = await queryOnce<{ pid: number }>(url, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()");
  return rows.map((row) => row.pid);
}

/**
 * Polls this database's backends matching `where` until their count satisfies
 * `done`; fails after 5 s, so a race whose moment never came cannot pass.
 */
async function untilBackends(url: string, where: string, done: (count: number) => boolean): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    for (let tries = 0; tries < 500; tries++) {
      const { rows } = await admin.query<{ n: string }>(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND ${where}`);
      if (done(Number(rows[0]!.n))) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no moment when the backends where ${where} satisfied the race's condition came within 5 s`);
  } finally {
    await admin.end();
  }
}

describeWith(needsPostgres())("lock order (PostgreSQL)", () => {
  let url: string;
  beforeAll(() => {
    url = db.url!;
  });
  afterAll(() => undefined);

  it("lock order: two follow-on requests begun at once in one task never deadlock", async () => {
    const setup = agentCaller(app.deps);
    const { sessionId } = await setup.session.open({});
    const found = await deadlocksDuring(url, async (deps) => {
      const agent = agentCaller(deps);
      for (let round = 0; round < ROUNDS; round++) {
        const first = await agent.request.begin({ sessionId, agent: "worker" });
        await agent.request.complete({ requestId: first.requestId });
        const begun = await Promise.all([0, 1].map(() => agent.request.begin({ sessionId, agent: "worker", taskId: first.taskId })));
        expect(new Set(begun.map((b) => b.taskId))).toEqual(new Set([first.taskId]));
      }
    });
    expect(found).toBe(0);
  });

  it("lock order: request.fail racing approval.decide on the request's own approval never deadlocks", async () => {
    const setup = agentCaller(app.deps);
    const { sessionId } = await setup.session.open({});
    const found = await deadlocksDuring(url, async (deps) => {
      const agent = agentCaller(deps);
      const operator = await operatorCaller(deps);
      for (let round = 0; round < ROUNDS; round++) {
        const parent = await agent.request.begin({ sessionId, agent: "planner", kind: "orchestrator" });
        const child = await agent.request.begin({ sessionId, agent: "mailer", parentRequestId: parent.requestId });
        const asked = await agent.approval.request({ requestId: child.requestId, tool: "send_email", args: { round } });
        const [failed, decided] = await Promise.allSettled([
          agent.request.fail({ requestId: child.requestId, error: { message: "gave up" } }),
          operator.approval.decide({ approvalId: asked.approvalId, action: "approve" }),
        ]);
        expect(failed.status).toBe("fulfilled");
        // The decision either came first, or found the approval canceled with its request.
        if (decided.status === "rejected") expect(decided.reason).toMatchObject({ code: "CONFLICT" });
        const approval = await deps.prisma.approval.findUniqueOrThrow({ where: { id: asked.approvalId } });
        expect(["APPROVED", "CANCELED"]).toContain(approval.status);
      }
    });
    expect(found).toBe(0);
  });

  it("lock order: approval.request racing approval.decide in one call chain never deadlocks", async () => {
    const setup = agentCaller(app.deps);
    const { sessionId } = await setup.session.open({});
    const found = await deadlocksDuring(url, async (deps) => {
      const agent = agentCaller(deps);
      const operator = await operatorCaller(deps);
      for (let round = 0; round < ROUNDS; round++) {
        const parent = await agent.request.begin({ sessionId, agent: "planner", kind: "orchestrator" });
        const child = await agent.request.begin({ sessionId, agent: "mailer", parentRequestId: parent.requestId });
        const first = await agent.approval.request({ requestId: child.requestId, tool: "send_email", args: { round } });
        const [second] = await Promise.all([
          agent.approval.request({ requestId: child.requestId, tool: "send_sms", args: { round } }),
          operator.approval.decide({ approvalId: first.approvalId, action: "approve" }),
        ]);
        const chain = await deps.prisma.request.findMany({ where: { id: { in: [parent.requestId, child.requestId] } } });
        // The second approval still pauses the whole chain, whichever committed first.
        expect(chain.map((row) => [row.status, row.pendingApprovals])).toEqual([
          ["PAUSED", 1],
          ["PAUSED", 1],
        ]);
        await operator.approval.decide({ approvalId: second.approvalId, action: "reject", message: "no" });
      }
    });
    expect(found).toBe(0);
  });

  it("lock order: two batches of decisions over the same two call chains, named in opposite orders, never deadlock (the SQL, called directly)", async () => {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const chains = [await agent.request.begin({ sessionId, agent: "mailer" }), await agent.request.begin({ sessionId, agent: "texter" })];
    const approvalIds: string[] = [];
    for (const chain of chains) approvalIds.push((await agent.approval.request({ requestId: chain.requestId, tool: "send", args: {} })).approvalId);
    // Chained to a head that is not the workspace's: each batch takes every lock, then finds the head taken and writes nothing, so the rounds race the same rows.
    const batch = (ids: string[]) => unchainedEndings(app.workspaceId, ids, 999_999);
    const found = await deadlocksDuring(url, async (deps) => {
      for (let round = 0; round < 10 * ROUNDS; round++) {
        const written = await Promise.all(
          [approvalIds, [...approvalIds].reverse()].map((ids) =>
            deps.prisma.$queryRaw<{ kind: string }[]>`SELECT kind FROM tollgate_finish_approvals_if_unchanged(${app.workspaceId}, ${999_999}::int, ${batch(ids)}::json)`,
          ),
        );
        expect(written).toEqual([[{ kind: "contended" }], [{ kind: "contended" }]]);
      }
    });
    expect(found).toBe(0);
    expect(await app.deps.prisma.approval.count({ where: { id: { in: approvalIds }, status: "PENDING" } })).toBe(2);
  });

  it("lock order: siblings in one task ending at once (in one statement each) never deadlock, and the task ends", async () => {
    const setup = agentCaller(app.deps);
    const { sessionId } = await setup.session.open({});
    const found = await deadlocksDuring(url, async (deps) => {
      const agent = agentCaller(deps);
      for (let round = 0; round < ROUNDS; round++) {
        const first = await agent.request.begin({ sessionId, agent: "writer" });
        const more = await Promise.all([1, 2, 3].map(() => agent.request.begin({ sessionId, agent: "writer", taskId: first.taskId })));
        await Promise.all([first, ...more].map((sibling) => agent.request.complete({ requestId: sibling.requestId })));
        expect((await deps.prisma.task.findUniqueOrThrow({ where: { id: first.taskId } })).status).toBe("COMPLETED");
      }
    });
    expect(found).toBe(0);
  });

  it("lock order: a task cancel that finds a request begun after its first read, racing an ask on that request, never deadlocks", async () => {
    // The ask takes its locks in the order every use case does (the request's
    // chain, then its task), by hand, so it can pause between them.
    const setup = agentCaller(app.deps);
    const { sessionId } = await setup.session.open({});
    const running = await setup.request.begin({ sessionId, agent: "worker" });
    const found = await deadlocksDuring(url, async (deps) => {
      const operator = await operatorCaller(deps);
      const holder = new pg.Client({ connectionString: url });
      const asker = new pg.Client({ connectionString: url });
      await holder.connect();
      await asker.connect();
      const pidOf = async (client: pg.Client) => (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
      const waitingOn = (pid: number) => untilBackends(url, `${pid} = ANY(pg_blocking_pids(pid))`, (count) => count > 0);
      try {
        // The cancel's first read finds the running request; its chain lock then waits on the holder.
        await holder.query("BEGIN");
        await holder.query(`SELECT 1 FROM "Request" WHERE id = $1 FOR NO KEY UPDATE`, [running.requestId]);
        const canceled = operator.task.cancel({ taskId: running.taskId });
        await waitingOn(await pidOf(holder));
        // Meanwhile a request begins in the task, and an ask on it locks its chain.
        const latecomer = await agentCaller(deps).request.begin({ sessionId, agent: "worker", taskId: running.taskId });
        await asker.query("BEGIN");
        await asker.query(`SELECT 1 FROM "Request" WHERE id = $1 FOR NO KEY UPDATE`, [latecomer.requestId]);
        await holder.query("ROLLBACK");
        // The cancel goes on until it waits on the ask's chain; the ask then wants the task.
        await waitingOn(await pidOf(asker));
        // Where the cancel holds the task this is a deadlock, and one of the two is canceled.
        const deadlocked = (error: Error) => /deadlock detected/.test(error.message) || Promise.reject(error);
        await asker.query(`SELECT 1 FROM "Task" WHERE id = $1 FOR NO KEY UPDATE`, [running.taskId]).catch(deadlocked);
        await asker.query("COMMIT");
        expect((await canceled).canceledRequests).toBe(2);
      } finally {
        await holder.end();
        await asker.end();
      }
    });
    expect(found).toBe(0);
  });

  it("lock order: a task cancel that finds latecomers on every try cancels them on its last, out of order", async () => {
    const setup = agentCaller(app.deps);
    const { sessionId } = await setup.session.open({});
    const running = await setup.request.begin({ sessionId, agent: "worker" });
    const operator = await operatorCaller(app.deps);
    // Two connections take turns holding the running request's row: the cancel
    // waits on one while a request begins in the task, and the other queues
    // behind the cancel, so it holds the row again before the cancel's next try.
    const holders = [new pg.Client({ connectionString: url }), new pg.Client({ connectionString: url })] as const;
    const lockRunning = (holder: pg.Client) => holder.query(`SELECT 1 FROM "Request" WHERE id = $1 FOR NO KEY UPDATE`, [running.requestId]);
    const pidOf = async (client: pg.Client) => (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    const waitingOn = (pid: number) => untilBackends(url, `${pid} = ANY(pg_blocking_pids(pid))`, (count) => count > 0);
    try {
      for (const holder of holders) await holder.connect();
      const pids = [await pidOf(holders[0]), await pidOf(holders[1])] as const;
      await holders[0].query("BEGIN");
      await lockRunning(holders[0]);
      const canceled = operator.task.cancel({ taskId: running.taskId });
      const latecomers: string[] = [];
      for (let tries = 1; tries <= ATTEMPTS; tries++) {
        const [holding, next] = (tries % 2 === 1 ? [0, 1] : [1, 0]) as [0 | 1, 0 | 1];
        await waitingOn(pids[holding]);
        latecomers.push((await setup.request.begin({ sessionId, agent: "worker", taskId: running.taskId })).requestId);
        let queued: Promise<unknown> = Promise.resolve();
        if (tries < ATTEMPTS) {
          await holders[next].query("BEGIN");
          queued = lockRunning(holders[next]);
          await untilBackends(url, `pid = ${pids[next]} AND cardinality(pg_blocking_pids(pid)) > 0`, (count) => count > 0);
        }
        await holders[holding].query("ROLLBACK");
        await queued;
      }
      expect((await canceled).canceledRequests).toBe(1 + ATTEMPTS);
      const statuses = await app.deps.prisma.request.findMany({ where: { id: { in: [running.requestId, ...latecomers] } }, select: { status: true } });
      expect(statuses.map((request) => request.status)).toEqual(Array(1 + ATTEMPTS).fill("CANCELED"));
    } finally {
      for (const holder of holders) await holder.end();
    }
  });

  it("lock order: request.fail canceling the request's own approval, racing a decision in the same task, never deadlocks", async () => {
    // The failing request stays paused on its child's approval, so ending it is
    // what changes its task; the decision is a sibling's, in that task.
    const setup = agentCaller(app.deps);
    const { sessionId } = await setup.session.open({});
    const found = await deadlocksDuring(url, async (deps) => {
      const agent = agentCaller(deps);
      const operator = await operatorCaller(deps);
      for (let round = 0; round < 3; round++) {
        const failing = await agent.request.begin({ sessionId, agent: "planner", kind: "orchestrator" });
        await agent.approval.request({ requestId: failing.requestId, tool: "send_email", args: { round } });
        const child = await agent.request.begin({ sessionId, agent: "mailer", parentRequestId: failing.requestId });
        await agent.approval.request({ requestId: child.requestId, tool: "send_sms", args: { round } });
        const sibling = await agent.request.begin({ sessionId, agent: "planner", kind: "orchestrator", taskId: failing.taskId });
        const asked = await agent.approval.request({ requestId: sibling.requestId, tool: "pay_invoice", args: { round } });
        // The failure holds what it took up to its audit entries until the decision waits on a lock.
        let decided: Promise<unknown> | undefined;
        const append = deps.audit.appendMany.bind(deps.audit);
        const spy = vi.spyOn(deps.audit, "appendMany").mockImplementation(async (...args) => {
          spy.mockRestore();
          const seqs = await append(...args);
          decided = operator.approval.decide({ approvalId: asked.approvalId, action: "approve" });
          await untilBackends(url, "wait_event_type = 'Lock'", (count) => count > 0);
          return seqs;
        });
        await agent.request.fail({ requestId: failing.requestId, error: { message: "gave up" } });
        await decided;
        expect((await deps.prisma.approval.findUniqueOrThrow({ where: { id: asked.approvalId } })).status).toBe("APPROVED");
      }
    });
    expect(found).toBe(0);
  });
});
