// Use cases that run as one database statement (a SQL function created by a
// migration): counted at the driver, and checked for what they write; and the
// task-status function every use case shares, table-driven. Their races on
// PostgreSQL are in lock-order.test.ts.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { z } from "zod";
import type { Prisma } from "../server/db/generated/client.ts";
import type { RunStatus } from "../server/domain/lifecycle.ts";
import { newId } from "../server/domain/ids.ts";
import { verifyAudit } from "../server/services/audit.ts";
import { GateFactsCache } from "../server/services/approvals/gate-facts-cache.ts";
import { finishQueuedApprovals, readApprovalBeforeEnding } from "../server/services/approvals/finish-approval.ts";
import { createServiceDeps } from "../server/services/deps.ts";
import { AuditTurns } from "../server/services/approvals/audit-turns.ts";
import { DecisionBatches } from "../server/services/approvals/decision-batches.ts";
import { analyzeChangedTables } from "../server/services/planner-statistics.ts";
import { insertVersionIfUnchanged } from "../server/services/thread-state.ts";
import { unchainedEndings } from "./unchained-endings.ts";
import { needsPostgres, skipWithout } from "./requires.ts";
import { AGENT_KEY, agentCaller, callerWith, operatorCaller, useFreshApp, type TestApp, type TestDatabase } from "./harness.ts";

let db: TestDatabase;
let app: TestApp;
useFreshApp((created) => (db = created), (fresh) => (app = fresh));
afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * Waits until the agent key's first use is recorded: that write runs off the
 * call's path, and would otherwise be counted with whichever call it overlaps.
 */
async function keyUseRecorded() {
  while (!(await db.prisma.agentKey.findFirst({ where: { workspaceId: app.workspaceId, lastUsedAt: { not: null } } }))) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Rows by id in the order of `ids`: rows made in the same millisecond tie on createdAt, so it cannot order them. */
function inOrderOf<Row extends { id: string }>(ids: string[], rows: Row[]): (Row | undefined)[] {
  return ids.map((id) => rows.find((row) => row.id === id));
}

/** As on a node that did not begin the request: it remembers no gate facts, so an ask reads them first. */
function forgetGateFacts() {
  app.deps.gateFacts = new GateFactsCache();
}

async function status(id: string) {
  const row = (await db.prisma.request.findUnique({ where: { id } })) ?? (await db.prisma.task.findUnique({ where: { id } }));
  return row?.status;
}

/** The approval ended once: its chain runs again, one trace and one audit entry of the decision, and the audit chain holds. */
async function endedOnce(approvalId: string, requestIds: string[]) {
  expect(await db.prisma.request.findMany({ where: { id: { in: requestIds } }, select: { status: true, pendingApprovals: true } })).toEqual(
    requestIds.map(() => ({ status: "RUNNING", pendingApprovals: 0 })),
  );
  expect(await db.prisma.traceEvent.count({ where: { type: "approval.decided", data: { path: ["approvalId"], equals: approvalId } } })).toBe(1);
  expect(await db.prisma.auditEntry.count({ where: { subjectId: approvalId, action: "approval.decided" } })).toBe(1);
  expect(await verifyAudit(app.deps, app.workspaceId)).toMatchObject({ ok: true });
}

/**
 * Runs `meanwhile` once the first raw statement whose SQL contains `readsFrom`
 * (a use case's unlocked read) has returned, before the use case goes on: the
 * interleaving a concurrent change can cause.
 */
function afterTheRead(readsFrom: string, meanwhile: () => Promise<unknown>) {
  const read = app.deps.sql.query.bind(app.deps.sql);
  const spy = vi.spyOn(app.deps.sql, "query").mockImplementation((async (statement: Prisma.Sql) => {
    const rows = await read(statement);
    if (statement.strings.join("?").includes(readsFrom)) {
      spy.mockRestore();
      await meanwhile();
    }
    return rows;
  }) as typeof read);
}

describe("the engine's SQL functions", () => {
  it("plan their statements once per connection: every one is PL/pgSQL on generic plans, but the chain query its callers inline", async () => {
    const replannedPerCall = await db.prisma.$queryRaw<{ name: string }[]>`
      SELECT p.proname AS name FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
      WHERE starts_with(p.proname, 'tollgate_')
        AND (l.lanname <> 'plpgsql' OR NOT ('plan_cache_mode=force_generic_plan' = ANY(coalesce(p.proconfig, '{}'))))
      ORDER BY p.proname`;
    expect(replannedPerCall.map((row) => row.name)).toEqual(["tollgate_call_chains"]);
  });

  it("look rows up by index whatever the planner knows of the tables: no sequential scan, hash join or merge join in any of them", async () => {
    const planning = ["enable_seqscan=off", "enable_hashjoin=off", "enable_mergejoin=off"];
    const mayScan = await db.prisma.$queryRaw<{ name: string }[]>`
      SELECT p.proname AS name FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
      WHERE starts_with(p.proname, 'tollgate_') AND l.lanname = 'plpgsql'
        AND NOT (${planning}::text[] <@ coalesce(p.proconfig, '{}'))
      ORDER BY p.proname`;
    expect(mayScan).toEqual([]);
  });

  it("planner statistics: a table changed by more rows than autovacuum waits for is analyzed, where no autovacuum does it (PGlite has none)", async () => {
    const agent = agentCaller(app.deps);
    for (let opened = 0; opened < 60; opened++) await agent.session.open({ title: `session ${opened}` });
    const sessionsAnalyzed = async () => {
      await analyzeChangedTables(db.prisma);
      const [stats] = await db.prisma.$queryRaw<{ analyzed: boolean }[]>`
        SELECT last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL AS analyzed FROM pg_stat_user_tables WHERE relname = 'Session'`;
      return stats!.analyzed;
    };
    // A server's counters reach the statistics views within a second or so.
    await expect.poll(sessionsAnalyzed, { timeout: 10_000 }).toBe(true);
  });
});

describe("request.complete and request.fail in one statement", () => {
  it("completing a running request is one statement: the request, its trace and its task are written", async () => {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "one statement" });
    await keyUseRecorded();
    const begun = await agent.request.begin({ sessionId, agent: "writer" });

    const { result, statements } = await db.countStatements(() => agent.request.complete({ requestId: begun.requestId, output: { sent: 3 } }));
    expect(result).toEqual({ requestId: begun.requestId, status: "COMPLETED" });
    expect(statements).toBe(1);

    const request = await db.prisma.request.findUniqueOrThrow({ where: { id: begun.requestId } });
    expect(request).toMatchObject({ status: "COMPLETED", output: { sent: 3 } });
    expect(request.endedAt).toBeInstanceOf(Date);
    expect(await status(begun.taskId)).toBe("COMPLETED");
    const traces = await db.prisma.traceEvent.findMany({ where: { requestId: begun.requestId }, orderBy: { id: "asc" } });
    expect(traces.map((trace) => [trace.type, trace.data])).toEqual([
      ["invocation", { input: null, parentRequestId: null }],
      ["response", { output: { sent: 3 } }],
    ]);
  });

  it("failing is one statement too, and the task says FAILED once nothing in it runs", async () => {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "one statement" });
    await keyUseRecorded();
    const first = await agent.request.begin({ sessionId, agent: "writer" });
    const second = await agent.request.begin({ sessionId, agent: "writer", taskId: first.taskId });

    await agent.request.complete({ requestId: first.requestId });
    expect(await status(first.taskId)).toBe("RUNNING");
    const error = { message: "the mail server refused", code: "SMTP_550" };
    const { statements } = await db.countStatements(() => agent.request.fail({ requestId: second.requestId, error }));
    expect(statements).toBe(1);
    expect(await db.prisma.request.findUniqueOrThrow({ where: { id: second.requestId } })).toMatchObject({ status: "FAILED", error });
    expect(await status(first.taskId)).toBe("FAILED");
  });

  it("a sibling still paused keeps the task PAUSED; the output of nothing is stored as nothing", async () => {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "siblings" });
    const waiting = await agent.request.begin({ sessionId, agent: "writer" });
    const running = await agent.request.begin({ sessionId, agent: "writer", taskId: waiting.taskId });
    await agent.approval.request({ requestId: waiting.requestId, tool: "send_email", args: {} });
    expect(await status(waiting.taskId)).toBe("PAUSED");

    await agent.request.complete({ requestId: running.requestId });
    expect(await status(waiting.taskId)).toBe("PAUSED");
    expect((await db.prisma.request.findUniqueOrThrow({ where: { id: running.requestId } })).output).toBeNull();
  });

  it("what the one statement does not take goes the general way: a paused request fails with its approval canceled, an ended one says so", async () => {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "general path" });
    await keyUseRecorded();
    const begun = await agent.request.begin({ sessionId, agent: "writer" });
    const asked = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: {} });

    const { statements } = await db.countStatements(() => agent.request.fail({ requestId: begun.requestId, error: { message: "gave up" } }));
    expect(statements).toBeGreaterThan(1);
    expect(await status(begun.requestId)).toBe("FAILED");
    expect((await db.prisma.approval.findUniqueOrThrow({ where: { id: asked.approvalId } })).status).toBe("CANCELED");

    expect(await agent.request.fail({ requestId: begun.requestId, error: { message: "again" } })).toEqual({ requestId: begun.requestId, status: "FAILED" });
    await expect(agent.request.complete({ requestId: begun.requestId })).rejects.toMatchObject({ code: "CONFLICT" });
  });

  it("another key's request is NOT_FOUND, and nothing of it changes", async () => {
    const owner = agentCaller(app.deps);
    const { sessionId } = await owner.session.open({ title: "not yours" });
    const begun = await owner.request.begin({ sessionId, agent: "writer" });
    const admin = await operatorCaller(app.deps);
    const agent = agentCaller(app.deps, (await admin.agentKey.create({ name: "another service" })).key);

    await expect(agent.request.complete({ requestId: begun.requestId })).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await status(begun.requestId)).toBe("RUNNING");
    expect(await db.prisma.traceEvent.count({ where: { requestId: begun.requestId, type: "response" } })).toBe(0);
  });
});

describe("request.begin in one statement", () => {
  it("a new task, a child under a parent, and a follow-on in the task: one statement each, with the rows, trace and statuses of the general path", async () => {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "one statement" });
    await keyUseRecorded();

    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const traced = callerWith(app.deps, { bearerToken: AGENT_KEY, traceparent });
    const root = await db.countStatements(() => traced.request.begin({ sessionId, agent: "planner", kind: "orchestrator", input: { b: 1, a: 2 } }));
    expect(root.statements).toBe(1);
    const child = await db.countStatements(() => agent.request.begin({ sessionId, agent: "mailer", parentRequestId: root.result.requestId }));
    expect(child.statements).toBe(1);
    await agent.approval.request({ requestId: child.result.requestId, tool: "send_email", args: {} });
    const followOn = await db.countStatements(() => agent.request.begin({ sessionId, agent: "mailer", taskId: child.result.taskId, idempotencyKey: "follow-on-1" }));
    expect(followOn.statements).toBe(1);
    expect(followOn.result.taskId).toBe(child.result.taskId);

    const rootRow = await db.prisma.request.findUniqueOrThrow({ where: { id: root.result.requestId } });
    expect(rootRow).toMatchObject({ status: "PAUSED", traceparent, parentRequestId: null });
    // json keeps the agent's key order.
    expect(Object.keys(rootRow.input as object)).toEqual(["b", "a"]);
    const rootTask = await db.prisma.task.findUniqueOrThrow({ where: { id: root.result.taskId } });
    expect(rootTask).toMatchObject({ kind: "ORCHESTRATOR", agent: "planner", parentTaskId: null, status: "PAUSED" });
    const childTask = await db.prisma.task.findUniqueOrThrow({ where: { id: child.result.taskId } });
    expect(childTask).toMatchObject({ kind: "AGENT", parentTaskId: root.result.taskId, status: "PAUSED" });
    expect(await db.prisma.request.findUniqueOrThrow({ where: { id: followOn.result.requestId } })).toMatchObject({ status: "RUNNING", idempotencyKey: "follow-on-1", parentRequestId: null });
    const invocation = await db.prisma.traceEvent.findFirstOrThrow({ where: { requestId: child.result.requestId, type: "invocation" } });
    expect(invocation).toMatchObject({ name: "mailer", data: { input: null, parentRequestId: root.result.requestId } });

    // The same idempotency key again: the general path answers with the same request.
    expect(await agent.request.begin({ sessionId, agent: "mailer", taskId: child.result.taskId, idempotencyKey: "follow-on-1" })).toEqual(followOn.result);
  });

  it("refusals write nothing and say what the general path says", async () => {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "refusals" });
    const { sessionId: otherSession } = await agent.session.open({ title: "another" });
    const root = await agent.request.begin({ sessionId, agent: "planner" });
    await agent.request.complete({ requestId: root.requestId });
    const before = await db.prisma.request.count();

    await expect(agent.request.begin({ sessionId, agent: "mailer", parentRequestId: root.requestId })).rejects.toMatchObject({ code: "PRECONDITION_FAILED", message: expect.stringContaining("already ended as COMPLETED") });
    await expect(agent.request.begin({ sessionId: otherSession, agent: "planner", taskId: root.taskId })).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("belongs to session") });
    await expect(agent.request.begin({ sessionId, agent: "someone else", taskId: root.taskId })).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("cannot continue it") });
    await expect(agent.request.begin({ sessionId: "ses_0000000000000000000000", agent: "planner" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await db.prisma.request.count()).toBe(before);
    expect(await db.prisma.task.count()).toBe(1);
  });
});

/** The running and paused requests the tasks count, by task id. */
async function countsKept(tasks: string[]) {
  return db.prisma.task.findMany({ where: { id: { in: tasks } }, orderBy: { id: "asc" }, select: { id: true, runningRequests: true, pausedRequests: true } });
}

/** The same, counted from the requests. */
async function countsRecounted(tasks: string[]) {
  return Promise.all(
    [...tasks].sort().map(async (id) => ({
      id,
      runningRequests: await db.prisma.request.count({ where: { taskId: id, status: "RUNNING" } }),
      pausedRequests: await db.prisma.request.count({ where: { taskId: id, status: "PAUSED" } }),
    })),
  );
}

describe("a task's status, derived by tollgate_refresh_task_statuses (invariant 2)", () => {
  it.each<[RunStatus, RunStatus[], RunStatus]>([
    ["RUNNING", ["RUNNING", "PAUSED"], "PAUSED"],
    ["PAUSED", ["COMPLETED", "RUNNING"], "RUNNING"],
    ["RUNNING", ["FAILED", "COMPLETED"], "COMPLETED"],
    ["COMPLETED", ["COMPLETED", "RUNNING"], "RUNNING"],
    ["RUNNING", ["COMPLETED", "FAILED"], "FAILED"],
    ["RUNNING", ["CANCELED"], "CANCELED"],
    ["CANCELED", ["RUNNING"], "CANCELED"],
    ["RUNNING", [], "RUNNING"],
  ])("a %s task whose requests are, oldest first, %j becomes %s", async (current, requests, expected) => {
    const { sessionId } = await agentCaller(app.deps).session.open({});
    const task = await db.prisma.task.create({ data: { id: newId("tsk"), workspaceId: app.workspaceId, sessionId, agent: "a", kind: "AGENT", status: current } });
    for (const [index, status] of requests.entries()) {
      await db.prisma.request.create({ data: { id: newId("req"), workspaceId: app.workspaceId, sessionId, taskId: task.id, status, createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, index)) } });
    }
    const changed = await db.prisma.$queryRaw<{ task_id: string; status: RunStatus }[]>`
      SELECT task_id, status FROM tollgate_refresh_task_statuses(${[task.id]}::text[], ${new Date()}::timestamp(3))`;
    expect(changed).toEqual(expected === current ? [] : [{ task_id: task.id, status: expected }]);
    expect((await db.prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status).toBe(expected);
  });

  it("reads counts the database keeps for every writer: inserts, updates of many requests across tasks, deletes", async () => {
    const { sessionId } = await agentCaller(app.deps).session.open({});
    const tasks = [newId("tsk"), newId("tsk")];
    for (const id of tasks) await db.prisma.task.create({ data: { id, workspaceId: app.workspaceId, sessionId, agent: "a", kind: "AGENT" } });
    const statuses: RunStatus[] = ["RUNNING", "PAUSED", "COMPLETED", "RUNNING", "FAILED", "PAUSED"];
    await db.prisma.request.createMany({
      data: statuses.map((status, index) => ({ id: `req_${index}`, workspaceId: app.workspaceId, sessionId, taskId: tasks[index % 2]!, status })),
    });
    const counted = () => countsKept(tasks);
    const recounted = () => countsRecounted(tasks);
    expect(await counted()).toEqual(await recounted());
    // One statement changing requests of both tasks.
    await db.prisma.$executeRaw`UPDATE "Request" SET status = CASE WHEN status = 'PAUSED' THEN 'RUNNING'::"RunStatus" ELSE 'PAUSED'::"RunStatus" END WHERE id IN ('req_0', 'req_1', 'req_2', 'req_5')`;
    expect(await counted()).toEqual(await recounted());
    // Changes that cancel out within a task (req_0 PAUSED -> FAILED, req_4 FAILED -> PAUSED), and a statement that changes no status.
    await db.prisma.$executeRaw`UPDATE "Request" SET status = CASE id WHEN 'req_0' THEN 'FAILED'::"RunStatus" ELSE 'PAUSED'::"RunStatus" END WHERE id IN ('req_0', 'req_4')`;
    await db.prisma.$executeRaw`UPDATE "Request" SET "updatedAt" = now() WHERE "sessionId" = ${sessionId}`;
    expect(await counted()).toEqual(await recounted());
    await db.prisma.request.deleteMany({ where: { id: { in: ["req_1", "req_3"] } } });
    expect(await counted()).toEqual(await recounted());
  });

  it("request.begin and request.complete count their own request as they set the task's status; a write after them in the same transaction is counted by the trigger", async () => {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const first = await agent.request.begin({ sessionId, agent: "writer" });
    const paused = await agent.request.begin({ sessionId, agent: "writer", taskId: first.taskId });
    await agent.approval.request({ requestId: paused.requestId, tool: "send_email", args: {} });
    const third = await agent.request.begin({ sessionId, agent: "writer", taskId: first.taskId });
    const child = await agent.request.begin({ sessionId, agent: "reader", parentRequestId: first.requestId });
    const tasks = [first.taskId, child.taskId];
    expect(await countsKept(tasks)).toEqual(await countsRecounted(tasks));
    expect((await countsKept([first.taskId]))[0]).toMatchObject({ runningRequests: 2, pausedRequests: 1 });

    await agent.request.complete({ requestId: child.requestId });
    await agent.request.complete({ requestId: first.requestId });
    await agent.request.fail({ requestId: third.requestId, error: { message: "refused" } });
    expect(await countsKept(tasks)).toEqual(await countsRecounted(tasks));
    expect(await status(first.taskId)).toBe("PAUSED");
    expect(await status(child.taskId)).toBe("COMPLETED");

    const later = await agent.request.begin({ sessionId, agent: "writer", taskId: first.taskId });
    const { agentKeyId } = await db.prisma.request.findUniqueOrThrow({ where: { id: later.requestId } });
    await db.prisma.$transaction(async (tx) => {
      const [ended] = await tx.$queryRaw<{ outcome: string }[]>`
        SELECT outcome FROM tollgate_end_request(${app.workspaceId}, ${later.requestId}, ${agentKeyId}, 'COMPLETED', NULL, NULL, ${new Date()}::timestamp(3))`;
      expect(ended?.outcome).toBe("ended");
      await tx.$executeRaw`UPDATE "Request" SET status = 'CANCELED' WHERE id = ${paused.requestId}`;
    });
    expect(await countsKept(tasks)).toEqual(await countsRecounted(tasks));
    expect((await countsKept([first.taskId]))[0]).toMatchObject({ runningRequests: 0, pausedRequests: 0 });
  });

  it("an approval's opening and ending count the requests they pause and resume along a chain of three tasks, with the trigger standing aside", async () => {
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await agent.session.open({});
    const root = await agent.request.begin({ sessionId, agent: "planner" });
    const middle = await agent.request.begin({ sessionId, agent: "researcher", parentRequestId: root.requestId });
    const leaf = await agent.request.begin({ sessionId, agent: "mailer", parentRequestId: middle.requestId });
    const sibling = await agent.request.begin({ sessionId, agent: "researcher", taskId: middle.taskId });
    const tasks = [root.taskId, middle.taskId, leaf.taskId];

    const asked = await agent.approval.request({ requestId: leaf.requestId, tool: "send_email", args: {} });
    expect(await countsKept(tasks)).toEqual(await countsRecounted(tasks));
    expect((await countsKept([middle.taskId]))[0]).toMatchObject({ runningRequests: 1, pausedRequests: 1 });
    expect(await Promise.all(tasks.map(status))).toEqual(["PAUSED", "PAUSED", "PAUSED"]);

    await operator.approval.decide({ approvalId: asked.approvalId, action: "approve" });
    expect(await countsKept(tasks)).toEqual(await countsRecounted(tasks));
    expect(await Promise.all(tasks.map(status))).toEqual(["RUNNING", "RUNNING", "RUNNING"]);
    await agent.request.complete({ requestId: sibling.requestId });
    expect(await countsKept(tasks)).toEqual(await countsRecounted(tasks));
  });

  it("reads the task's latest request at most, however many requests the task has had", async () => {
    const { sessionId } = await agentCaller(app.deps).session.open({});
    const task = await db.prisma.task.create({ data: { id: newId("tsk"), workspaceId: app.workspaceId, sessionId, agent: "a", kind: "AGENT" } });
    await db.prisma.request.createMany({
      data: Array.from({ length: 200 }, (_, index) => ({
        id: newId("req"), workspaceId: app.workspaceId, sessionId, taskId: task.id, status: index === 199 ? "RUNNING" : "COMPLETED", createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, index)),
      })),
    });
    const requestRowsRead = async (tx: Parameters<Parameters<typeof db.prisma.$transaction>[0]>[0]) => {
      const [row] = await tx.$queryRaw<{ read: bigint }[]>`
        SELECT COALESCE(idx_tup_fetch, 0) + COALESCE(seq_tup_read, 0) AS read FROM pg_stat_xact_user_tables WHERE relname = 'Request'`;
      return Number(row?.read ?? 0);
    };
    const read = await db.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`UPDATE "Request" SET status = 'COMPLETED' WHERE "taskId" = ${task.id} AND status = 'RUNNING'`;
      const before = await requestRowsRead(tx);
      const [changed] = await tx.$queryRaw<{ status: RunStatus }[]>`
        SELECT status FROM tollgate_refresh_task_statuses(${[task.id]}::text[], ${new Date()}::timestamp(3))`;
      expect(changed?.status).toBe("COMPLETED");
      return (await requestRowsRead(tx)) - before;
    });
    // The latest request, found at the end of the task's index, and the version
    // of it the update above left behind: not the task's 200 requests.
    expect(read).toBeLessThanOrEqual(2);
  });
});

describe("approval.request in two statements", () => {
  it("a call put before a person: one statement reads the gate's facts, one locks the chain, finds them unchanged, writes the approval, pauses the chain and traces it", async () => {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "two statements" });
    await keyUseRecorded();
    const root = await agent.request.begin({ sessionId, agent: "orchestrator" });
    const leaf = await agent.request.begin({ sessionId, agent: "mailer", parentRequestId: root.requestId });
    // The workspace's rules are read once into the cache; this call is what every later one costs.
    await agent.approval.request({ requestId: root.requestId, tool: "warm_up", args: {} });
    forgetGateFacts();

    const { result, statements } = await db.countStatements(() => agent.approval.request({ requestId: leaf.requestId, tool: "send_email", args: { to: "a@example.com", body: "hi" }, reason: "weekly report", idempotencyKey: "ask-weekly" }));
    expect(result).toMatchObject({ status: "PENDING" });
    // An idempotency key costs nothing on the first ask: the insert's unique index guards it.
    expect(statements).toBe(2);

    const approval = await db.prisma.approval.findUniqueOrThrow({ where: { id: result.approvalId } });
    expect(approval).toMatchObject({
      status: "PENDING",
      tool: "send_email",
      reason: "weekly report",
      requestId: leaf.requestId,
      taskId: leaf.taskId,
      sessionId,
      allowedActions: ["approve", "reject", "edit", "respond"],
      requiredRole: "OPERATOR",
      requiredApprovals: 1,
      decidedAt: null,
      receipt: null,
      kind: "tool",
      form: null,
      route: null,
    });
    expect(Object.keys(approval.proposedArgs as object)).toEqual(["to", "body"]);
    // Absent JSON is SQL NULL, as Prisma writes it, not a JSON null.
    const [nulls] = await db.prisma.$queryRaw<{ form: boolean; route: boolean; approved: boolean }[]>`
      SELECT form IS NULL AS form, route IS NULL AS route, "approvedArgs" IS NULL AS approved FROM "Approval" WHERE id = ${result.approvalId}`;
    expect(nulls).toEqual({ form: true, route: true, approved: true });
    const chain = await db.prisma.request.findMany({ where: { id: { in: [root.requestId, leaf.requestId] } }, select: { id: true, status: true, pendingApprovals: true } });
    expect(inOrderOf([root.requestId, leaf.requestId], chain)).toMatchObject([
      { status: "PAUSED", pendingApprovals: 2 },
      { status: "PAUSED", pendingApprovals: 1 },
    ]);
    expect([await status(root.taskId), await status(leaf.taskId)]).toEqual(["PAUSED", "PAUSED"]);
    const trace = await db.prisma.traceEvent.findFirstOrThrow({ where: { requestId: leaf.requestId, type: "approval.requested", name: "send_email" } });
    expect(trace).toMatchObject({ category: "EXECUTION", data: { approvalId: result.approvalId, args: { to: "a@example.com", body: "hi" }, policy: null } });

    // The next ask on the request with the same key uses the facts read for this one: its write alone.
    const next = await db.countStatements(() => agent.approval.request({ requestId: leaf.requestId, tool: "send_sms", args: {} }));
    expect(next.result).toMatchObject({ status: "PENDING" });
    expect(next.statements).toBe(1);
    expect(await db.prisma.request.findUniqueOrThrow({ where: { id: leaf.requestId } })).toMatchObject({ status: "PAUSED", pendingApprovals: 2 });
  });

  it("remembered facts that changed: the write finds them stale, and the call is gated on facts read now", async () => {
    const admin = await operatorCaller(app.deps);
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "remembered facts" });
    const begun = await agent.request.begin({ sessionId, agent: "payer" });
    await agent.approval.request({ requestId: begun.requestId, tool: "warm_up", args: {} });
    await admin.policy.create({ name: "no wires", match: { tool: "wire_*" }, outcome: "reject", message: "wires go through finance" });

    const { result, statements } = await db.countStatements(() => agent.approval.request({ requestId: begun.requestId, tool: "wire_money", args: { eur: 5000 } }));
    expect(result).toMatchObject({ status: "REJECTED", decision: { decidedBy: "policy:no wires" } });
    // The write on the remembered facts, then the read and the write on the new ones (the head read with them).
    expect(statements).toBeGreaterThan(2);
    expect(await verifyAudit(app.deps, app.workspaceId)).toMatchObject({ ok: true });
  });

  it("a refusal is never made on remembered facts: a tool the thread enabled since is asked for, not refused", async () => {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "a tool enabled since" });
    const begun = await agent.request.begin({ sessionId, agent: "researcher" });
    await agent.thread.configure({ taskId: begun.taskId, config: { enabledTools: ["search"] } });
    await agent.approval.request({ requestId: begun.requestId, tool: "search", args: {} });
    await agent.thread.configure({ taskId: begun.taskId, config: { enabledTools: ["search", "refund"] } });

    expect(await agent.approval.request({ requestId: begun.requestId, tool: "refund", args: { eur: 5 } })).toMatchObject({ status: "PENDING" });
    await expect(agent.approval.request({ requestId: begun.requestId, tool: "wire", args: {} })).rejects.toThrow(/not enabled in the thread/);
  });

  it("a retried ask gets the approval its key made, also once the request has ended; another request's key is refused", async () => {
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "retries" });
    const begun = await agent.request.begin({ sessionId, agent: "mailer" });
    const ask = { requestId: begun.requestId, tool: "send_email", args: { to: "a@example.com" }, idempotencyKey: "ask-retried" };
    const first = await agent.approval.request(ask);
    expect(await agent.approval.request(ask)).toEqual(first);
    await operator.approval.decide({ approvalId: first.approvalId, action: "approve" });
    await agent.request.complete({ requestId: begun.requestId });

    expect(await agent.approval.request(ask)).toMatchObject({ approvalId: first.approvalId, status: "APPROVED" });
    expect(await db.prisma.approval.count({ where: { requestId: begun.requestId } })).toBe(1);
    const other = await agent.request.begin({ sessionId, agent: "mailer" });
    await expect(agent.approval.request({ ...ask, requestId: other.requestId })).rejects.toThrow(/already used for approval/);
  });

  it("a call a rule approves on remembered facts is one statement: the audit entry chains to the entry this node last wrote, found still the head behind the workspace's audit lock", async () => {
    const admin = await operatorCaller(app.deps);
    await admin.policy.create({ name: "lookups", match: { tool: "lookup_*" }, outcome: "approve" });
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "a rule decides" });
    await keyUseRecorded();
    const begun = await agent.request.begin({ sessionId, agent: "researcher" });
    await agent.approval.request({ requestId: begun.requestId, tool: "lookup_warm", args: {} });

    const { result, statements } = await db.countStatements(() => agent.approval.request({ requestId: begun.requestId, tool: "lookup_customer", args: { id: 7 } }));
    expect(result).toMatchObject({ status: "APPROVED", decision: { action: "approve", decidedBy: "policy:lookups", decider: "policy" } });
    expect(statements).toBe(1);

    const approval = await db.prisma.approval.findUniqueOrThrow({ where: { id: result.approvalId } });
    expect(approval).toMatchObject({ status: "APPROVED", deciderKind: "policy", approvedArgs: { id: 7 }, allowedActions: [], agentSeenAt: null });
    expect(approval.receipt).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(await db.prisma.request.findUniqueOrThrow({ where: { id: begun.requestId } })).toMatchObject({ status: "RUNNING", pendingApprovals: 0 });
    const traces = await db.prisma.traceEvent.findMany({ where: { requestId: begun.requestId, name: "lookup_customer" }, orderBy: { id: "asc" } });
    expect(traces.map((trace) => trace.type)).toEqual(["approval.requested", "approval.decided"]);
    expect(await db.prisma.auditEntry.findFirst({ where: { subjectId: result.approvalId } })).toMatchObject({ action: "approval.decided", actorType: "policy" });
    expect(await verifyAudit(app.deps, app.workspaceId)).toMatchObject({ ok: true });
  });
  it("an entry another writer added since: the guessed head is found taken, the head is read and the call chained after it, and the workspace is not taken for contended", async () => {
    const admin = await operatorCaller(app.deps);
    await admin.policy.create({ name: "lookups", match: { tool: "lookup_*" }, outcome: "approve" });
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "the head moved" });
    await keyUseRecorded();
    const begun = await agent.request.begin({ sessionId, agent: "researcher" });
    await agent.approval.request({ requestId: begun.requestId, tool: "lookup_warm", args: {} });
    await admin.agentKey.create({ name: "audited by another writer" });

    const ask = (id: number) => db.countStatements(() => agent.approval.request({ requestId: begun.requestId, tool: "lookup_customer", args: { id } }));
    const { result, statements } = await ask(7);
    expect(result).toMatchObject({ status: "APPROVED", decision: { decidedBy: "policy:lookups" } });
    // The write on the guessed head, then the read of the facts and the head, and the write.
    expect(statements).toBe(3);
    const [keyCreated, decided] = await db.prisma.auditEntry.findMany({ where: { workspaceId: app.workspaceId }, orderBy: { seq: "desc" }, take: 2 }).then((rows) => rows.reverse());
    expect([keyCreated!.action, decided!.action]).toEqual(["agent_key.created", "approval.decided"]);
    expect(decided!.prevHash).toBe(keyCreated!.hash);
    expect(await verifyAudit(app.deps, app.workspaceId)).toMatchObject({ ok: true });
    // Not contended: the next ask reads first (no transaction); for a while the head is read rather than guessed.
    const transactions = vi.spyOn(app.deps.prisma, "$transaction");
    expect((await ask(8)).statements).toBe(2);
    expect(transactions).not.toHaveBeenCalled();
  });
});

describe("approval.request right after request.begin on the same node", () => {
  it("is one statement: the begin read the new request's gate facts, and the ask's write checks them behind the lock", async () => {
    const admin = await operatorCaller(app.deps);
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "begun here" });
    await keyUseRecorded();
    const warmUp = await agent.request.begin({ sessionId, agent: "mailer" });
    await agent.approval.request({ requestId: warmUp.requestId, tool: "warm_up", args: {} });

    const begun = await agent.request.begin({ sessionId, agent: "mailer" });
    const { result, statements } = await db.countStatements(() => agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { to: "a@example.com" } }));
    expect(result).toMatchObject({ status: "PENDING" });
    expect(statements).toBe(1);
    expect(await db.prisma.request.findUniqueOrThrow({ where: { id: begun.requestId } })).toMatchObject({ status: "PAUSED", pendingApprovals: 1 });

    // A rule made between the begin and the ask: the write finds the facts changed, and the call is gated on facts read now.
    const next = await agent.request.begin({ sessionId, agent: "mailer" });
    await admin.policy.create({ name: "no wires", match: { tool: "wire_*" }, outcome: "reject", message: "wires go through finance" });
    const gated = await db.countStatements(() => agent.approval.request({ requestId: next.requestId, tool: "wire_money", args: { eur: 5000 } }));
    expect(gated.result).toMatchObject({ status: "REJECTED", decision: { decidedBy: "policy:no wires" } });
    expect(gated.statements).toBeGreaterThan(1);
    expect(await verifyAudit(app.deps, app.workspaceId)).toMatchObject({ ok: true });
  });
});

describe("approval.request when something changes between its read and its write", () => {

  it("a rule added meanwhile gates the call: the write finds the facts changed, and the call is gated again behind the lock", async () => {
    const admin = await operatorCaller(app.deps);
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "a rule arrives" });
    const begun = await agent.request.begin({ sessionId, agent: "payer" });
    // The rules as they are now are in the server's cache: only the write can notice the new one.
    const sibling = await agent.request.begin({ sessionId, agent: "payer" });
    await agent.approval.request({ requestId: sibling.requestId, tool: "warm_up", args: {} });
    forgetGateFacts();
    afterTheRead("tollgate_read_request_for_approval", () => admin.policy.create({ name: "no wires", match: { tool: "wire_*" }, outcome: "reject", message: "wires go through finance" }));

    const { result, statements } = await db.countStatements(() => agent.approval.request({ requestId: begun.requestId, tool: "wire_money", args: { eur: 5000 } }));
    expect(result).toMatchObject({ status: "REJECTED", decision: { decidedBy: "policy:no wires" } });
    // The read and the write that found it stale, then the locking path: the lock and read, the rules, the audit head, the write.
    expect(statements).toBeGreaterThan(2);
    expect(await db.prisma.approval.count({ where: { requestId: begun.requestId, tool: "wire_money" } })).toBe(1);
    expect(await db.prisma.request.findUniqueOrThrow({ where: { id: begun.requestId } })).toMatchObject({ status: "RUNNING", pendingApprovals: 0 });
    expect(await verifyAudit(app.deps, app.workspaceId)).toMatchObject({ ok: true });
  });

  it("an audit entry written meanwhile: a rule's decision is chained again, after it, and the workspace's asks lock first for a while", async () => {
    const admin = await operatorCaller(app.deps);
    await admin.policy.create({ name: "lookups", match: { tool: "lookup_*" }, outcome: "approve" });
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "the head moves" });
    const begun = await agent.request.begin({ sessionId, agent: "researcher" });
    // The workspace's notification channels, read with its first ask a person decides, are remembered.
    await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { to: "first@example.com" } });
    forgetGateFacts();
    afterTheRead("tollgate_read_request_for_approval", () => admin.agentKey.create({ name: "audited meanwhile" }));

    const result = await agent.approval.request({ requestId: begun.requestId, tool: "lookup_customer", args: { id: 7 } });
    expect(result).toMatchObject({ status: "APPROVED", decision: { decidedBy: "policy:lookups" } });
    const [keyCreated, decided] = await db.prisma.auditEntry.findMany({ where: { workspaceId: app.workspaceId }, orderBy: { seq: "desc" }, take: 2 }).then((rows) => rows.reverse());
    expect([keyCreated!.action, decided!.action]).toEqual(["agent_key.created", "approval.decided"]);
    expect(decided!.prevHash).toBe(keyCreated!.hash);
    expect(await verifyAudit(app.deps, app.workspaceId)).toMatchObject({ ok: true });

    // Rule decisions contend for the head: for ten seconds the workspace's asks a rule decides lock first (three statements), then go without a lock again
    // (one: the facts are remembered, and the head is the entry this node last wrote).
    const ask = () => db.countStatements(() => agent.approval.request({ requestId: begun.requestId, tool: "lookup_customer", args: { id: 8 } }));
    expect((await ask()).statements).toBe(3);
    // An ask a person decides writes no audit entry: one statement, without a lock, meanwhile too.
    const transactions = vi.spyOn(app.deps.prisma, "$transaction");
    const personDecides = await db.countStatements(() => agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { to: "a@example.com" } }));
    expect(personDecides).toMatchObject({ result: { status: "PENDING" }, statements: 1 });
    expect(transactions).not.toHaveBeenCalled();
    expect(app.deps.auditHeadContention.contended(app.workspaceId, new Date())).toBe(true);
    const now = app.deps.now;
    app.deps.now = () => new Date(Date.now() + 10_000);
    try {
      // Ten seconds on, the agent key is read again once (it is remembered for five); the ask after that shows the path.
      await ask();
      expect((await ask()).statements).toBe(1);
    } finally {
      app.deps.now = now;
    }
  });

  it("the write itself refuses stale facts and an audit head another entry took, and writes nothing (the SQL, called directly)", async () => {
    const admin = await operatorCaller(app.deps);
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "stale" });
    const begun = await agent.request.begin({ sessionId, agent: "mailer" });
    const read = async () => {
      const [row] = await db.prisma.$queryRaw<{ fingerprint: string; audit_seq: number | null }[]>`
        SELECT (r.facts).fingerprint, r.audit_seq FROM tollgate_read_request_for_approval(${app.workspaceId}, ${begun.requestId}, ${null}) r`;
      return row!;
    };
    const write = (fingerprint: string, auditSeq: number | null, audit: string | null) => {
      const approval = { id: newId("apr"), workspaceId: app.workspaceId, sessionId, taskId: begun.taskId, requestId: begun.requestId, tool: "send", proposedArgs: {}, status: "APPROVED", createdAt: new Date() };
      return db.prisma.$queryRaw<{ kind: string }[]>`
        SELECT kind FROM tollgate_open_approval_if_unchanged(${app.workspaceId}, ${null}, ${fingerprint}, ${auditSeq}::int, ${JSON.stringify(approval)}::json,
          '[]'::json, '[]'::json, ${audit}::json, ${new Date()}::timestamp(3))`;
    };
    const before = await read();
    await admin.policy.create({ name: "a new rule", match: { tool: "x" }, outcome: "approve" });
    expect(await write(before.fingerprint, before.audit_seq, null)).toEqual([{ kind: "stale" }]);

    const now = await read();
    await admin.agentKey.create({ name: "moves the head" });
    const audit = JSON.stringify({ workspaceId: app.workspaceId, seq: now.audit_seq! + 1, actorType: "system", actorId: "t", actorLabel: "t", action: "approval.decided", subjectType: "approval", subjectId: "apr_x", data: null, prevHash: "p", hash: "h", macVersion: 1, createdAt: new Date() });
    expect(await write(now.fingerprint, now.audit_seq, audit)).toEqual([{ kind: "contended" }]);
    // The head's seq alone is not enough: an entry chained to another entry of that seq (one a database lost, say) is refused.
    const [moved] = await db.prisma.$queryRaw<{ audit_seq: number }[]>`SELECT r.audit_seq FROM tollgate_read_request_for_approval(${app.workspaceId}, ${begun.requestId}, ${null}) r`;
    const elsewhere = JSON.stringify({ ...JSON.parse(audit), seq: moved!.audit_seq + 1, prevHash: "the hash of a lost entry" });
    expect(await write(now.fingerprint, moved!.audit_seq, elsewhere)).toEqual([{ kind: "contended" }]);
    expect(await db.prisma.approval.count({ where: { requestId: begun.requestId } })).toBe(0);
  });
});

describe("approval.decide in two statements", () => {
  it("one statement reads the approval and the audit head, one locks what the ending needs, finds them unchanged and writes the decision, the chain un-paused, the delivery, the trace and the audit entry", async () => {
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "two statements" });
    const root = await agent.request.begin({ sessionId, agent: "orchestrator" });
    const leaf = await agent.request.begin({ sessionId, agent: "mailer", parentRequestId: root.requestId, resumeUrl: "https://hooks.example.com/resume" });
    const { approvalId } = await agent.approval.request({ requestId: leaf.requestId, tool: "send_email", args: { to: "a@example.com", body: "hi" } });
    expect([await status(root.requestId), await status(leaf.requestId), await status(root.taskId)]).toEqual(["PAUSED", "PAUSED", "PAUSED"]);
    await operator.approval.list({});

    const transactions = vi.spyOn(app.deps.prisma, "$transaction");
    const { result, statements } = await db.countStatements(() => operator.approval.decide({ approvalId, action: "edit", args: { body: "hello", to: "a@example.com" } }));
    expect(result).toMatchObject({ approvalId, status: "APPROVED", decision: { action: "edit", args: { body: "hello", to: "a@example.com" } } });
    // The decision is two statements and no transaction around them (this
    // node has written no audit entry in the workspace, so it reads the head);
    // the operator's session, checked by the list before, is remembered
    // (server/services/principal-cache.ts).
    expect(statements).toBe(2);
    expect(transactions).not.toHaveBeenCalled();

    const approval = await db.prisma.approval.findUniqueOrThrow({ where: { id: approvalId } });
    expect(approval).toMatchObject({ status: "APPROVED", decisionAction: "edit", deciderKind: "operator", decidedBy: "admin@example.com" });
    expect(Object.keys(approval.approvedArgs as object)).toEqual(["body", "to"]);
    expect(approval.receipt).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(await db.prisma.request.findMany({ where: { id: { in: [root.requestId, leaf.requestId] } }, select: { status: true, pendingApprovals: true } })).toEqual([
      { status: "RUNNING", pendingApprovals: 0 },
      { status: "RUNNING", pendingApprovals: 0 },
    ]);
    expect([await status(root.taskId), await status(leaf.taskId)]).toEqual(["RUNNING", "RUNNING"]);
    expect(await db.prisma.decisionDelivery.findMany({ where: { approvalId }, select: { url: true, status: true } })).toEqual([{ url: "https://hooks.example.com/resume", status: "PENDING" }]);
    const trace = await db.prisma.traceEvent.findFirstOrThrow({ where: { requestId: leaf.requestId, type: "approval.decided" } });
    expect(trace.data).toEqual({ approvalId, status: "APPROVED", action: "edit", decidedBy: "admin@example.com" });
    const entry = await db.prisma.auditEntry.findFirstOrThrow({ where: { subjectId: approvalId, action: "approval.decided" } });
    expect(entry.data).toMatchObject({ status: "APPROVED", action: "edit", args: { to: "a@example.com", body: "hello" } });
    expect(await verifyAudit(app.deps, app.workspaceId)).toMatchObject({ ok: true });
  });

  it("only a decision that queued a webhook delivery wakes the webhook deliverer (its look for due deliveries costs statements on the database every call shares)", async () => {
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "webhooks" });
    const polled = await agent.request.begin({ sessionId, agent: "mailer" });
    const hooked = await agent.request.begin({ sessionId, agent: "mailer", resumeUrl: "https://hooks.example.com/resume" });
    const ask = (requestId: string) => agent.approval.request({ requestId, tool: "send_email", args: {} });
    const [first, second] = [await ask(polled.requestId), await ask(hooked.requestId)];
    const queued: number[] = [];
    const unsubscribe = app.deps.bus.on("webhook:queued", ({ count }) => queued.push(count));
    try {
      await operator.approval.decide({ approvalId: first.approvalId, action: "approve" });
      expect(queued).toEqual([]);
      await operator.approval.decide({ approvalId: second.approvalId, action: "reject" });
      expect(queued).toEqual([1]);
    } finally {
      unsubscribe();
    }
  });

  it("the ending's conditional write is write-once in the SQL itself: a second ending of the same approval writes nothing", async () => {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "write-once" });
    const begun = await agent.request.begin({ sessionId, agent: "mailer" });
    const { approvalId } = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: {} });
    const ending = (decidedBy: string) =>
      JSON.stringify({ status: "APPROVED", decisionAction: "approve", decisionMessage: null, approvedArgs: {}, decidedBy, decidedById: null, deciderKind: "operator", receipt: null });
    const audit = (seq: number) =>
      JSON.stringify({ workspaceId: app.workspaceId, seq, actorType: "system", actorId: "t", actorLabel: "t", action: "approval.decided", subjectType: "approval", subjectId: approvalId, data: null, prevHash: "p", hash: `h${seq}`, macVersion: 1, createdAt: new Date() });
    const finish = (decidedBy: string, seq: number) =>
      db.prisma.$queryRaw<{ kind: string; id: string; status: string | null }[]>`
        SELECT kind, id, status FROM tollgate_finish_approval(${approvalId}, ${ending(decidedBy)}::json, NULL, '{}'::json, ${audit(seq)}::json, ${new Date()}::timestamp(3))`;
    const head = await db.prisma.auditEntry.count({ where: { workspaceId: app.workspaceId } });

    // Called one after the other without the locks, as two racing endings would be if the locks failed.
    const first = await finish("first", head + 1);
    const second = await finish("second", head + 2);
    expect(first).toEqual([
      { kind: "approval", id: approvalId, status: null },
      { kind: "request", id: begun.requestId, status: "RUNNING" },
      { kind: "task", id: begun.taskId, status: "RUNNING" },
    ]);
    expect(second).toEqual([]);
    expect(await db.prisma.approval.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({ status: "APPROVED", decidedBy: "first" });
    expect(await db.prisma.request.findUniqueOrThrow({ where: { id: begun.requestId } })).toMatchObject({ status: "RUNNING", pendingApprovals: 0 });
    expect(await db.prisma.traceEvent.count({ where: { requestId: begun.requestId, type: "approval.decided" } })).toBe(1);
    expect(await db.prisma.auditEntry.count({ where: { subjectId: approvalId } })).toBe(1);
  });
});

describe("approval.decide when something changes between its read and its write", () => {
  async function pendingApproval(title: string) {
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await agent.session.open({ title });
    const root = await agent.request.begin({ sessionId, agent: "orchestrator" });
    const leaf = await agent.request.begin({ sessionId, agent: "mailer", parentRequestId: root.requestId });
    const { approvalId } = await agent.approval.request({ requestId: leaf.requestId, tool: "send_email", args: { to: "a@example.com" } });
    // As on a node that did not open it: the decision reads the approval and the head, then writes.
    app.deps.openedApprovals.take(app.workspaceId, approvalId);
    return { operator, approvalId, root, leaf };
  }

  /** An operator on another node: this node's decisions in a workspace take turns (AuditTurns), another node's do not wait for them. */
  async function operatorOnAnotherNode() {
    const otherDeps = createServiceDeps(db, app.bus);
    await otherDeps.receipts.ready();
    return operatorCaller(otherDeps);
  }

  it("another decision lands meanwhile: the write finds the approval ended, and behind the locks a different decision is CONFLICT and the chain is resumed once", async () => {
    const { operator, approvalId, root, leaf } = await pendingApproval("decided meanwhile");
    const other = await operatorOnAnotherNode();
    afterTheRead("tollgate_read_approval_before_ending", () => other.approval.decide({ approvalId, action: "reject", message: "not today" }));

    await expect(operator.approval.decide({ approvalId, action: "approve" })).rejects.toMatchObject({ code: "CONFLICT" });
    expect(await db.prisma.approval.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({ status: "REJECTED", decisionMessage: "not today" });
    await endedOnce(approvalId, [root.requestId, leaf.requestId]);
  });

  it("the same decision lands meanwhile: the retry gets what was stored", async () => {
    const { operator, approvalId, root, leaf } = await pendingApproval("the same decision meanwhile");
    const other = await operatorOnAnotherNode();
    afterTheRead("tollgate_read_approval_before_ending", () => other.approval.decide({ approvalId, action: "approve" }));

    const result = await operator.approval.decide({ approvalId, action: "approve" });
    const stored = await db.prisma.approval.findUniqueOrThrow({ where: { id: approvalId } });
    expect(result).toMatchObject({ status: "APPROVED", decision: { action: "approve", decidedAt: stored.decidedAt!.toISOString() } });
    await endedOnce(approvalId, [root.requestId, leaf.requestId]);
  });

  it("an audit entry written meanwhile: the decision is chained after it, and the workspace decides behind the locks for a while", async () => {
    const { operator, approvalId, root, leaf } = await pendingApproval("the head moves");
    afterTheRead("tollgate_read_approval_before_ending", () => operator.agentKey.create({ name: "audited meanwhile" }));

    expect(await operator.approval.decide({ approvalId, action: "approve" })).toMatchObject({ status: "APPROVED" });
    const [keyCreated, decided] = await db.prisma.auditEntry.findMany({ where: { workspaceId: app.workspaceId }, orderBy: { seq: "desc" }, take: 2 }).then((rows) => rows.reverse());
    expect([keyCreated!.action, decided!.action]).toEqual(["agent_key.created", "approval.decided"]);
    expect(decided!.prevHash).toBe(keyCreated!.hash);
    await endedOnce(approvalId, [root.requestId, leaf.requestId]);

    // Decisions contend for the head: for ten seconds the workspace decides in a transaction behind the locks, then reads first again.
    const transactions = vi.spyOn(app.deps.prisma, "$transaction");
    const decideNext = async () => {
      const next = await pendingApproval("next");
      transactions.mockClear();
      await next.operator.approval.decide({ approvalId: next.approvalId, action: "approve" });
      return transactions.mock.calls.length;
    };
    expect(await decideNext()).toBe(1);
    const now = app.deps.now;
    app.deps.now = () => new Date(Date.now() + 10_000);
    try {
      expect(await decideNext()).toBe(0);
    } finally {
      app.deps.now = now;
    }
  });

  it("the write itself refuses an ended approval and an audit head another entry took, and writes nothing (the SQL, called directly)", async () => {
    const { operator, approvalId, leaf } = await pendingApproval("refused writes");
    const head = async () => (await db.prisma.auditEntry.findFirst({ where: { workspaceId: app.workspaceId }, orderBy: { seq: "desc" } }))?.seq ?? null;
    const ending = JSON.stringify({ status: "APPROVED", decisionAction: "approve", decisionMessage: null, approvedArgs: {}, decidedBy: "t", decidedById: null, deciderKind: "operator", receipt: null });
    const write = (id: string, seq: number | null) => {
      const audit = JSON.stringify({ workspaceId: app.workspaceId, seq: (seq ?? 0) + 1, actorType: "system", actorId: "t", actorLabel: "t", action: "approval.decided", subjectType: "approval", subjectId: id, data: null, prevHash: "p", hash: "h", macVersion: 1, createdAt: new Date() });
      return db.prisma.$queryRaw<{ kind: string }[]>`
        SELECT kind FROM tollgate_finish_approval_if_unchanged(${app.workspaceId}, ${id}, ${seq}::int, ${ending}::json, NULL, '{}'::json, ${audit}::json, ${new Date()}::timestamp(3))`;
    };

    const read = await head();
    await operator.agentKey.create({ name: "moves the head" });
    expect(await write(approvalId, read)).toEqual([{ kind: "contended" }]);
    // The head's seq, but an entry chained to another entry of that seq (one a database lost, say): refused as well.
    expect(await write(approvalId, await head())).toEqual([{ kind: "contended" }]);
    expect(await db.prisma.approval.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({ status: "PENDING" });
    expect(await db.prisma.request.findUniqueOrThrow({ where: { id: leaf.requestId } })).toMatchObject({ status: "PAUSED", pendingApprovals: 1 });

    await operator.approval.decide({ approvalId, action: "reject" });
    expect(await write(approvalId, await head())).toEqual([{ kind: "stale" }]);
    expect(await write("apr_nonexistent", await head())).toEqual([{ kind: "stale" }]);
    expect(await db.prisma.approval.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({ status: "REJECTED" });
    expect(await db.prisma.auditEntry.count({ where: { subjectId: approvalId, action: "approval.decided" } })).toBe(1);
  });
});

describe("approval.decide as one statement, on the node that opened the approval", () => {
  /** A request this node began, with one decision already made on this node: it knows the workspace's audit head. */
  async function nodeThatWroteTheHead(title: string) {
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await agent.session.open({ title });
    const root = await agent.request.begin({ sessionId, agent: "orchestrator" });
    const leaf = await agent.request.begin({ sessionId, agent: "mailer", parentRequestId: root.requestId, resumeUrl: "https://hooks.example.com/resume" });
    const first = await agent.approval.request({ requestId: leaf.requestId, tool: "send_email", args: { to: "first@example.com" } });
    await operator.approval.decide({ approvalId: first.approvalId, action: "approve" });
    const ask = async (args: z.core.util.JSONType = { to: "a@example.com", body: "hi" }) => (await agent.approval.request({ requestId: leaf.requestId, tool: "send_email", args })).approvalId;
    return { agent, operator, root, leaf, ask };
  }

  const claimsOf = (receipt: string) => JSON.parse(Buffer.from(receipt.split(".")[1]!, "base64url").toString("utf8"));

  it("the approval this node opened is the row the decision's read would find, with its agent and its request's webhook address", async () => {
    const { ask } = await nodeThatWroteTheHead("as written");
    const approvalId = await ask({ to: "b@example.com", nested: { n: [1, 2.5, null, "x"] } });
    const opened = app.deps.openedApprovals.take(app.workspaceId, approvalId);
    const read = await readApprovalBeforeEnding(app.deps, app.workspaceId, approvalId);
    expect(opened).toBeDefined();
    expect(opened).toEqual({ approval: read!.approval, resumeUrl: "https://hooks.example.com/resume" });
    // Taken once: a second decision reads it.
    expect(app.deps.openedApprovals.take(app.workspaceId, approvalId)).toBeUndefined();
  });

  it("is one statement: the approval as opened and the head this node wrote, checked behind the locks by the write, which ends the approval as the two-statement path does", async () => {
    const { operator, root, leaf, ask } = await nodeThatWroteTheHead("one statement");
    const approvalId = await ask();
    await operator.approval.list({});

    const transactions = vi.spyOn(app.deps.prisma, "$transaction");
    const { result, statements } = await db.countStatements(() => operator.approval.decide({ approvalId, action: "edit", args: { to: "a@example.com", body: "hello" } }));
    expect(result).toMatchObject({ approvalId, status: "APPROVED", decision: { action: "edit", args: { to: "a@example.com", body: "hello" } } });
    expect(statements).toBe(1);
    expect(transactions).not.toHaveBeenCalled();

    const approval = await db.prisma.approval.findUniqueOrThrow({ where: { id: approvalId } });
    expect(approval).toMatchObject({ status: "APPROVED", decisionAction: "edit", decidedBy: "admin@example.com", approvedArgs: { to: "a@example.com", body: "hello" } });
    expect(claimsOf(approval.receipt!)).toMatchObject({ sub: approvalId, ws: app.workspaceId, req: leaf.requestId, agent: "mailer", tool: "send_email" });
    expect(await db.prisma.decisionDelivery.findMany({ where: { approvalId }, select: { url: true } })).toEqual([{ url: "https://hooks.example.com/resume" }]);
    await endedOnce(approvalId, [root.requestId, leaf.requestId]);
  });

  it("an approval with large arguments is not kept: its decision reads it", async () => {
    const { operator, ask } = await nodeThatWroteTheHead("large");
    const approvalId = await ask({ to: "a@example.com", body: "x".repeat(100_000) });
    expect(app.deps.openedApprovals.take(app.workspaceId, approvalId)).toBeUndefined();
    const small = await ask();
    await operator.approval.list({});
    expect((await db.countStatements(() => operator.approval.decide({ approvalId: small, action: "approve" }))).statements).toBe(1);
  });

  it("an approval that ended meanwhile: the write finds it so, the approval is read, and the decision is CONFLICT", async () => {
    const { agent, operator, leaf, ask } = await nodeThatWroteTheHead("ended meanwhile");
    const approvalId = await ask();
    await agent.request.fail({ requestId: leaf.requestId, error: { message: "gave up" } });

    await expect(operator.approval.decide({ approvalId, action: "approve" })).rejects.toMatchObject({ code: "CONFLICT" });
    expect(await db.prisma.approval.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({ status: "CANCELED" });
    expect(await db.prisma.auditEntry.count({ where: { subjectId: approvalId, action: "approval.decided" } })).toBe(0);
    expect(await verifyAudit(app.deps, app.workspaceId)).toMatchObject({ ok: true });
  });

  it("an audit entry another writer added meanwhile: the head this node wrote is found taken, and the decision is chained after the new one, without taking the workspace for contended", async () => {
    const { operator, ask } = await nodeThatWroteTheHead("the head moves");
    const approvalId = await ask();
    await operator.agentKey.create({ name: "audited meanwhile" });

    const transactions = vi.spyOn(app.deps.prisma, "$transaction");
    const { result, statements } = await db.countStatements(() => operator.approval.decide({ approvalId, action: "approve" }));
    expect(result).toMatchObject({ status: "APPROVED" });
    // The guessed write, then the read and the write of the two-statement path.
    expect(statements).toBe(3);
    expect(transactions).not.toHaveBeenCalled();
    const [keyCreated, decided] = await db.prisma.auditEntry.findMany({ where: { workspaceId: app.workspaceId }, orderBy: { seq: "desc" }, take: 2 }).then((rows) => rows.reverse());
    expect([keyCreated!.action, decided!.action]).toEqual(["agent_key.created", "approval.decided"]);
    expect(decided!.prevHash).toBe(keyCreated!.hash);
    expect(await verifyAudit(app.deps, app.workspaceId)).toMatchObject({ ok: true });
    expect(app.deps.auditHeadContention.contended(app.workspaceId, new Date())).toBe(false);
  });

  it("a refusal is made on the approval as read: an action the approval does not allow, on one that has ended, is CONFLICT there too", async () => {
    const { agent, operator, leaf } = await nodeThatWroteTheHead("refusals");
    const { approvalId } = await agent.approval.request({ requestId: leaf.requestId, tool: "send_email", args: {}, allow: ["approve", "reject"] });
    await agent.request.fail({ requestId: leaf.requestId, error: { message: "gave up" } });
    await expect(operator.approval.decide({ approvalId, action: "edit", args: {} })).rejects.toMatchObject({ code: "CONFLICT" });
  });
});

describe("decisions at once on one node", () => {
  it("a writer whose turn does not come in time goes behind the locks, and is decided there", async () => {
    const admin = await operatorCaller(app.deps);
    await admin.policy.create({ name: "lookups", match: { tool: "lookup_*" }, outcome: "approve" });
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "a stuck turn" });
    const begun = await agent.request.begin({ sessionId, agent: "mailer" });
    const { approvalId } = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: {} });
    await agent.approval.request({ requestId: begun.requestId, tool: "lookup_warm", args: {} });
    // A writer holds the workspace's turn and never leaves it (stuck on the database, say).
    app.deps.auditTurns = new AuditTurns({ waitMs: 20 });
    app.deps.decisionBatches = new DecisionBatches(app.deps.auditTurns, (workspaceId, queued) => finishQueuedApprovals(app.deps, workspaceId, queued));
    const leave = await app.deps.auditTurns.enter(app.workspaceId);
    expect(leave).toBeDefined();

    const transactions = vi.spyOn(app.deps.prisma, "$transaction");
    expect(await admin.approval.decide({ approvalId, action: "approve" })).toMatchObject({ status: "APPROVED" });
    expect(await agent.approval.request({ requestId: begun.requestId, tool: "lookup_customer", args: { id: 1 } })).toMatchObject({ status: "APPROVED" });
    expect(transactions).toHaveBeenCalledTimes(2);
    leave!();
    expect(await verifyAudit(app.deps, app.workspaceId)).toMatchObject({ ok: true });
  });

  it("asks a rule decides take turns at the workspace's audit chain: each is one statement, and none finds the head taken", async () => {
    const admin = await operatorCaller(app.deps);
    await admin.policy.create({ name: "lookups", match: { tool: "lookup_*" }, outcome: "approve" });
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "rules at once" });
    await keyUseRecorded();
    const requests: { requestId: string }[] = [];
    for (let n = 0; n < 12; n++) requests.push(await agent.request.begin({ sessionId, agent: `researcher-${n}` }));
    await agent.approval.request({ requestId: requests[0]!.requestId, tool: "lookup_warm", args: {} });

    const transactions = vi.spyOn(app.deps.prisma, "$transaction");
    const { result, statements } = await db.countStatements(() =>
      Promise.all(requests.map(({ requestId }, n) => agent.approval.request({ requestId, tool: "lookup_customer", args: { n } }))),
    );
    expect(result.map((asked) => asked.status)).toEqual(requests.map(() => "APPROVED"));
    expect(statements).toBe(requests.length);
    expect(transactions).not.toHaveBeenCalled();
    expect(app.deps.auditHeadContention.contended(app.workspaceId, new Date())).toBe(false);
    expect(await verifyAudit(app.deps, app.workspaceId)).toMatchObject({ ok: true });
  });

});

describe("decisions queued for the audit turn, written together", () => {
  /** Approvals asked on this node (it opened them), after one decision made here: it knows the workspace's audit head. */
  async function openedApprovals(title: string, count: number) {
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await agent.session.open({ title });
    const begun = await agent.request.begin({ sessionId, agent: "mailer" });
    const first = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { n: 0 } });
    await operator.approval.decide({ approvalId: first.approvalId, action: "approve" });
    const approvalIds: string[] = [];
    for (let n = 1; n <= count; n++) approvalIds.push((await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { n } })).approvalId);
    return { operator, begun, approvalIds };
  }

  /**
   * Runs `decide` while a writer holds the workspace's turn, and leaves the
   * turn once `queued` decisions wait for it: they are then one batch.
   */
  async function whileTheTurnIsHeld<T>(queued: number, decide: () => Promise<T>, meanwhile: () => Promise<unknown> = async () => undefined): Promise<T> {
    const leave = await app.deps.auditTurns.enter(app.workspaceId);
    const written = vi.spyOn(app.deps.decisionBatches, "write");
    const decided = decide();
    await vi.waitFor(() => expect(written).toHaveBeenCalledTimes(queued));
    await meanwhile();
    leave!();
    return decided;
  }

  it("decisions that queue for the turn are one statement: chained one after another, no transaction, the chain un-paused once", async () => {
    const { operator, begun, approvalIds } = await openedApprovals("at once", 12);

    const transactions = vi.spyOn(app.deps.prisma, "$transaction");
    const { result, statements } = await db.countStatements(() =>
      whileTheTurnIsHeld(approvalIds.length, () => Promise.all(approvalIds.map((approvalId) => operator.approval.decide({ approvalId, action: "approve" })))),
    );
    expect(result.map((decided) => decided.status)).toEqual(approvalIds.map(() => "APPROVED"));
    expect(statements).toBe(1);
    expect(transactions).not.toHaveBeenCalled();
    const stored = await db.prisma.approval.findMany({ where: { id: { in: approvalIds } } });
    for (const decided of result) {
      const row = stored.find((each) => each.id === decided.approvalId)!;
      expect(decided.decision).toMatchObject({ decidedAt: row.decidedAt!.toISOString(), receipt: row.receipt });
    }
    const entries = await db.prisma.auditEntry.findMany({ where: { workspaceId: app.workspaceId, action: "approval.decided", subjectId: { in: approvalIds } }, orderBy: { seq: "asc" } });
    expect(entries.map((entry) => entry.seq)).toEqual(entries.map((_, index) => entries[0]!.seq + index));
    expect(await db.prisma.request.findUniqueOrThrow({ where: { id: begun.requestId } })).toMatchObject({ status: "RUNNING", pendingApprovals: 0 });
    expect(await db.prisma.traceEvent.count({ where: { requestId: begun.requestId, type: "approval.decided" } })).toBe(approvalIds.length + 1);
    expect(app.deps.auditHeadContention.contended(app.workspaceId, new Date())).toBe(false);
    expect(await verifyAudit(app.deps, app.workspaceId)).toMatchObject({ ok: true });
  });

  it("while this node's guess of the head is not trusted (a guess missed), queued decisions are still one batch: the head read in the turn, then one write", async () => {
    const { operator, approvalIds } = await openedApprovals("a guess missed", 6);
    app.deps.writtenAuditHeads.missed(app.workspaceId, new Date());

    const transactions = vi.spyOn(app.deps.prisma, "$transaction");
    const { result, statements } = await db.countStatements(() =>
      whileTheTurnIsHeld(approvalIds.length, () => Promise.all(approvalIds.map((approvalId) => operator.approval.decide({ approvalId, action: "approve" })))),
    );
    expect(result.map((decided) => decided.status)).toEqual(approvalIds.map(() => "APPROVED"));
    expect(statements).toBe(2);
    expect(transactions).not.toHaveBeenCalled();
    expect(await verifyAudit(app.deps, app.workspaceId)).toMatchObject({ ok: true });
  });

  it("one approval of the batch ended meanwhile: the batch writes nothing, and each decision is read and decided on its own", async () => {
    const { operator, begun, approvalIds } = await openedApprovals("one ended meanwhile", 3);
    const [first, ended, last] = approvalIds as [string, string, string];
    const otherNode = createServiceDeps(db, app.bus);
    await otherNode.receipts.ready();
    const other = await operatorCaller(otherNode);

    const results = await whileTheTurnIsHeld(
      3,
      () => Promise.allSettled(approvalIds.map((approvalId) => operator.approval.decide({ approvalId, action: "approve" }))),
      async () => {
        await other.approval.decide({ approvalId: ended, action: "reject", message: "not this one" });
        // And this node has since written the entry after it (an ask a rule decided, say): the head it chains the batch to is the head.
        const head = await db.prisma.auditEntry.findFirstOrThrow({ where: { workspaceId: app.workspaceId }, orderBy: { seq: "desc" } });
        app.deps.writtenAuditHeads.written(app.workspaceId, head);
      },
    );
    expect(results.map((each) => each.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: "CONFLICT" });
    expect(await db.prisma.approval.findMany({ where: { id: { in: approvalIds } }, orderBy: { id: "asc" }, select: { id: true, status: true } })).toEqual(
      [
        { id: first, status: "APPROVED" },
        { id: ended, status: "REJECTED" },
        { id: last, status: "APPROVED" },
      ].sort((a, b) => (a.id < b.id ? -1 : 1)),
    );
    for (const approvalId of approvalIds) await endedOnce(approvalId, [begun.requestId]);
    // Found stale, not contended: this node still chains to the head it knows.
    expect(app.deps.writtenAuditHeads.get(app.workspaceId, new Date())).toBeDefined();
  });

  it("a batch stuck on the database: a decision queued behind it goes behind the locks when the turn's wait is over, and the stuck one is decided after", async () => {
    const { operator, begun, approvalIds } = await openedApprovals("a stuck batch", 2);
    const [stuck, behind] = approvalIds as [string, string];
    let unstick!: () => void;
    const stuckUntil = new Promise<void>((resolve) => (unstick = resolve));
    let isStuck!: () => void;
    const stuckNow = new Promise<void>((resolve) => (isStuck = resolve));
    app.deps.auditTurns = new AuditTurns({ waitMs: 50 });
    app.deps.decisionBatches = new DecisionBatches(app.deps.auditTurns, async (workspaceId, queued) => {
      if (queued.some((each) => each.opened.approval.id === stuck)) {
        isStuck();
        await stuckUntil;
      }
      return finishQueuedApprovals(app.deps, workspaceId, queued);
    });

    const stuckDecision = operator.approval.decide({ approvalId: stuck, action: "approve" });
    await stuckNow;
    const transactions = vi.spyOn(app.deps.prisma, "$transaction");
    expect(await operator.approval.decide({ approvalId: behind, action: "approve" })).toMatchObject({ status: "APPROVED" });
    expect(transactions).toHaveBeenCalledTimes(1);
    unstick();
    expect(await stuckDecision).toMatchObject({ status: "APPROVED" });
    for (const approvalId of approvalIds) await endedOnce(approvalId, [begun.requestId]);
  });

  it("a batch whose write fails: each of its decisions is decided on its own, and only a decision alone gets the error", async () => {
    const { operator, begun, approvalIds } = await openedApprovals("a failing batch", 3);
    app.deps.decisionBatches = new DecisionBatches(app.deps.auditTurns, async (workspaceId, queued) => {
      if (queued.length > 1 || queued[0]!.opened.approval.id === approvalIds[2]) throw new Error("the batch's write failed");
      return finishQueuedApprovals(app.deps, workspaceId, queued);
    });

    const results = await whileTheTurnIsHeld(2, () => Promise.all(approvalIds.slice(0, 2).map((approvalId) => operator.approval.decide({ approvalId, action: "approve" }))));
    expect(results.map((decided) => decided.status)).toEqual(["APPROVED", "APPROVED"]);
    await expect(operator.approval.decide({ approvalId: approvalIds[2]!, action: "approve" })).rejects.toThrow("the batch's write failed");
    const rows = await db.prisma.approval.findMany({ where: { id: { in: approvalIds } }, select: { id: true, status: true } });
    expect(inOrderOf(approvalIds, rows).map((row) => row?.status)).toEqual(["APPROVED", "APPROVED", "PENDING"]);
    expect(await db.prisma.request.findUniqueOrThrow({ where: { id: begun.requestId } })).toMatchObject({ status: "PAUSED", pendingApprovals: 1 });
    expect(await db.prisma.auditEntry.count({ where: { subjectId: { in: approvalIds }, action: "approval.decided" } })).toBe(2);
    expect(await verifyAudit(app.deps, app.workspaceId)).toMatchObject({ ok: true });
  });

  it("an audit entry written meanwhile: the batch writes nothing, and each decision is chained after it on its own", async () => {
    const { operator, begun, approvalIds } = await openedApprovals("the head moves under a batch", 3);
    const otherNode = createServiceDeps(db, app.bus);
    await otherNode.receipts.ready();
    const other = await operatorCaller(otherNode);

    const results = await whileTheTurnIsHeld(
      3,
      () => Promise.all(approvalIds.map((approvalId) => operator.approval.decide({ approvalId, action: "approve" }))),
      () => other.agentKey.create({ name: "audited meanwhile" }),
    );
    expect(results.map((decided) => decided.status)).toEqual(["APPROVED", "APPROVED", "APPROVED"]);
    const keyCreated = await db.prisma.auditEntry.findFirstOrThrow({ where: { workspaceId: app.workspaceId, action: "agent_key.created" }, orderBy: { seq: "desc" } });
    const decided = await db.prisma.auditEntry.findMany({ where: { subjectId: { in: approvalIds } } });
    expect(decided.every((entry) => entry.seq > keyCreated.seq)).toBe(true);
    for (const approvalId of approvalIds) await endedOnce(approvalId, [begun.requestId]);
  });

  it("the batch's write itself refuses an ended approval, one named twice, none, and an audit head another entry took, and writes nothing (the SQL, called directly)", async () => {
    const { operator, begun, approvalIds } = await openedApprovals("refused batches", 2);
    const head = async () => (await db.prisma.auditEntry.findFirstOrThrow({ where: { workspaceId: app.workspaceId }, orderBy: { seq: "desc" } })).seq;
    const write = (ids: string[], seq: number) => db.prisma.$queryRaw<{ kind: string; ending: number | null }[]>`
      SELECT kind, ending FROM tollgate_finish_approvals_if_unchanged(${app.workspaceId}, ${seq}::int, ${unchainedEndings(app.workspaceId, ids, seq)}::json)`;
    const unchanged = async () => {
      expect(await db.prisma.approval.findMany({ where: { id: { in: approvalIds } }, select: { status: true } })).toEqual([{ status: "PENDING" }, { status: "PENDING" }]);
      expect(await db.prisma.request.findUniqueOrThrow({ where: { id: begun.requestId } })).toMatchObject({ status: "PAUSED", pendingApprovals: 2 });
      expect(await db.prisma.auditEntry.count({ where: { subjectId: { in: approvalIds } } })).toBe(0);
    };

    // Chained to an entry that is not the head: its seq, but another hash.
    expect(await write(approvalIds, await head())).toEqual([{ kind: "contended", ending: null }]);
    expect(await write([approvalIds[0]!, approvalIds[0]!], await head())).toEqual([{ kind: "stale", ending: null }]);
    expect(await write([approvalIds[0]!, "apr_nonexistent"], await head())).toEqual([{ kind: "stale", ending: null }]);
    expect(await write([], await head())).toEqual([{ kind: "stale", ending: null }]);
    await unchanged();

    await operator.approval.decide({ approvalId: approvalIds[1]!, action: "reject" });
    expect(await write(approvalIds, await head())).toEqual([{ kind: "stale", ending: null }]);
    expect(await db.prisma.approval.findUniqueOrThrow({ where: { id: approvalIds[0]! } })).toMatchObject({ status: "PENDING" });
    expect(await db.prisma.auditEntry.count({ where: { subjectId: approvalIds[0]! } })).toBe(0);
  });
});

describe("after the decision: the agent's reads and reports", () => {
  it("approval.await on a decided approval is one statement; the execution claim and the report are two each, with their traces", async () => {
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "after the decision" });
    await keyUseRecorded();
    const begun = await agent.request.begin({ sessionId, agent: "mailer" });
    const { approvalId } = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { to: "a@example.com", body: "hi" } });
    await operator.approval.decide({ approvalId, action: "approve" });

    const awaited = await db.countStatements(() => agent.approval.await({ approvalId, timeoutMs: 1_000 }));
    expect(awaited.result).toMatchObject({ approvalId, status: "APPROVED", decision: { action: "approve" } });
    expect(awaited.statements).toBe(1);

    const claim = await db.countStatements(() => agent.approval.claimExecution({ approvalId, claimKey: "replica-1" }));
    expect(claim.result).toMatchObject({ approvalId, granted: true });
    expect(claim.statements).toBe(2);
    expect(await agent.approval.claimExecution({ approvalId, claimKey: "replica-2" })).toMatchObject({ granted: false, execution: null });

    const report = await db.countStatements(() => agent.approval.reportExecution({ approvalId, executedArgs: { body: "hi", to: "a@example.com" }, result: { sent: true }, claimKey: "replica-1" }));
    expect(report.statements).toBe(2);
    const approval = await db.prisma.approval.findUniqueOrThrow({ where: { id: approvalId } });
    expect(approval).toMatchObject({ executionClaimKey: "replica-1", executionResult: { sent: true }, executionDeviated: false });
    expect(Object.keys(approval.executedArgs as object)).toEqual(["body", "to"]);
    const traces = await db.prisma.traceEvent.findMany({ where: { requestId: begun.requestId, type: { startsWith: "tool." } }, orderBy: { id: "asc" } });
    expect(traces.map((trace) => [trace.type, trace.name, trace.data])).toEqual([
      ["tool.claimed", "send_email", { approvalId }],
      ["tool.executed", "send_email", { approvalId, args: { body: "hi", to: "a@example.com" }, result: { sent: true }, deviated: false }],
    ]);
    // Reported once: a second report finds it written, and is the same report only with the same arguments.
    await agent.approval.reportExecution({ approvalId, executedArgs: { to: "a@example.com", body: "hi" }, claimKey: "replica-1" });
    await expect(agent.approval.reportExecution({ approvalId, executedArgs: { to: "b@example.com" }, claimKey: "replica-1" })).rejects.toMatchObject({ code: "CONFLICT" });
    expect(await db.prisma.traceEvent.count({ where: { requestId: begun.requestId, type: "tool.executed" } })).toBe(1);
  });
});

describe("the execution report's write-once guard", () => {
  it("two reports racing with other arguments: one is written and traced, the other is a CONFLICT", async ({ skip }) => {
    skipWithout(skip, needsPostgres());
    const agent = agentCaller(app.deps);
    const operator = await operatorCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "racing reports" });
    for (let round = 0; round < 8; round++) {
      const begun = await agent.request.begin({ sessionId, agent: "mailer" });
      const { approvalId } = await agent.approval.request({ requestId: begun.requestId, tool: "send_email", args: { to: "a@example.com" } });
      await operator.approval.decide({ approvalId, action: "approve" });
      const reports = await Promise.allSettled(
        ["a@example.com", "b@example.com"].map((to) => agent.approval.reportExecution({ approvalId, executedArgs: { to } })),
      );
      expect(reports.filter((report) => report.status === "fulfilled")).toHaveLength(1);
      expect(reports.find((report) => report.status === "rejected")).toMatchObject({ reason: { code: "CONFLICT" } });
      expect(await db.prisma.traceEvent.count({ where: { requestId: begun.requestId, type: "tool.executed" } })).toBe(1);
    }
  });
});

describe("the audit chain's head, locked and read in one statement", () => {
  it("appends racing in one workspace each chain to the one before: numbered without gaps, and the chain verifies", async ({ skip }) => {
    skipWithout(skip, needsPostgres());
    const actor = { type: "system" as const, id: "test", label: "test" };
    const before = await db.prisma.auditEntry.count({ where: { workspaceId: app.workspaceId } });
    await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        db.prisma.$transaction((tx) => app.deps.audit.append(tx, app.workspaceId, { actor, action: "test.raced", subjectType: "test", subjectId: String(index) }, new Date())),
      ),
    );
    const seqs = (await db.prisma.auditEntry.findMany({ where: { workspaceId: app.workspaceId }, orderBy: { seq: "asc" }, select: { seq: true } })).map((row) => row.seq);
    expect(seqs).toEqual(Array.from({ length: before + 12 }, (_, index) => index + 1));
    expect(await verifyAudit(app.deps, app.workspaceId)).toMatchObject({ ok: true });
  });
});


describe("request.trace in one statement", () => {
  it("a batch of events is one statement, written in order with the request's ids; a key with no authority writes nothing and gets NOT_FOUND", async () => {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "trace in one statement" });
    await keyUseRecorded();
    const begun = await agent.request.begin({ sessionId, agent: "tracer" });
    const events = [
      { type: "tool_call", name: "search", data: { query: "b", a: 1 } },
      { type: "message", data: "plain text" },
      { type: "thought" },
      { type: "tool_result", name: "search", data: null },
    ];
    const traced = await db.countStatements(() => agent.request.trace({ requestId: begun.requestId, events }));
    expect(traced).toMatchObject({ result: { accepted: 4 }, statements: 1 });
    const rows = await db.prisma.traceEvent.findMany({ where: { requestId: begun.requestId, type: { in: ["tool_call", "message", "thought", "tool_result"] } }, orderBy: { id: "asc" } });
    expect(rows.map((row) => [row.type, row.category, row.name, row.data, row.taskId, row.sessionId])).toEqual([
      ["tool_call", "EXECUTION", "search", { query: "b", a: 1 }, begun.taskId, sessionId],
      ["message", "INTERACTION", null, "plain text", begun.taskId, sessionId],
      ["thought", "EXECUTION", null, null, begun.taskId, sessionId],
      ["tool_result", "EXECUTION", "search", null, begun.taskId, sessionId],
    ]);
    expect(Object.keys(rows[0]!.data as object)).toEqual(["query", "a"]);
    // Stored as sent: no data is SQL NULL, a data of null is JSON null.
    const stored = await db.prisma.$queryRaw<{ type: string; text: string | null }[]>`
      SELECT type, data::text AS text FROM "TraceEvent" WHERE "requestId" = ${begun.requestId} AND type IN ('thought', 'tool_result') ORDER BY id`;
    expect(stored).toEqual([
      { type: "thought", text: null },
      { type: "tool_result", text: "null" },
    ]);

    const admin = await operatorCaller(app.deps);
    const stranger = agentCaller(app.deps, (await admin.agentKey.create({ name: "another service" })).key);
    await expect(stranger.request.trace({ requestId: begun.requestId, events })).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await db.prisma.traceEvent.count({ where: { requestId: begun.requestId } })).toBe(5);
  });
});

describe("state.save in two statements", () => {
  const sharedPlan = { rules: [{ match: { key: "plan" }, owner: "SHARED", protocol: "each step appends" }] };
  const orchestratorOwnsPlan = { rules: [{ match: { key: "plan" }, owner: "ORCHESTRATOR" }] };

  async function configuredThread(ownership: unknown) {
    const agent = agentCaller(app.deps);
    const { sessionId } = await agent.session.open({ title: "thread state" });
    await keyUseRecorded();
    const begun = await agent.request.begin({ sessionId, agent: "planner" });
    await agent.thread.configure({ taskId: begun.taskId, config: {}, ownership });
    return { agent, ...begun };
  }

  const versionsOf = (taskId: string) => db.prisma.agentStateVersion.findMany({ where: { taskId }, orderBy: { version: "asc" }, select: { version: true, state: true } });

  it("is the thread read without a lock, then one insert that finds the rules and the request as read: no transaction", async () => {
    const { agent, taskId, requestId } = await configuredThread(sharedPlan);
    const transactions = vi.spyOn(app.deps.prisma, "$transaction");
    const saved = await db.countStatements(() => agent.state.save({ taskId, requestId, state: { plan: ["draft"] } }));
    expect(saved.result).toMatchObject({ version: 1, unchanged: false });
    expect(saved.statements).toBe(2);
    expect(transactions).not.toHaveBeenCalled();
    const next = await db.countStatements(() => agent.state.save({ taskId, requestId, state: { plan: ["draft", "send"] }, baseVersion: 1 }));
    expect(next).toMatchObject({ result: { version: 2 }, statements: 2 });
    expect(await versionsOf(taskId)).toEqual([
      { version: 1, state: { plan: ["draft"] } },
      { version: 2, state: { plan: ["draft", "send"] } },
    ]);
  });

  it("rules changed between the read and the write: the insert writes nothing, and the save is checked again on the new rules", async () => {
    const { agent, taskId, requestId } = await configuredThread(sharedPlan);
    afterTheRead('AS "ownershipText"', () => agent.thread.configure({ taskId, config: {}, ownership: orchestratorOwnsPlan }));
    await expect(agent.state.save({ taskId, requestId, state: { plan: ["draft"] } })).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await versionsOf(taskId)).toEqual([]);
  });

  it("the writing request ended between the read and the write: the insert writes nothing, and the save is refused for the ended request", async () => {
    const { agent, taskId, requestId } = await configuredThread(sharedPlan);
    afterTheRead('AS "ownershipText"', () => agent.request.complete({ requestId, output: {} }));
    await expect(agent.state.save({ taskId, requestId, state: { plan: ["draft"] } })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringContaining(`request ${requestId} already ended as COMPLETED`),
    });
    expect(await versionsOf(taskId)).toEqual([]);
  });

  it("a save that took the version meanwhile: the insert collides, and the save is made again behind the thread's lock, on top of it", async () => {
    const { agent, taskId, requestId } = await configuredThread(sharedPlan);
    afterTheRead('AS "ownershipText"', () => agent.state.save({ taskId, requestId, state: { plan: ["first"] } }));
    const transactions = vi.spyOn(app.deps.prisma, "$transaction");
    await expect(agent.state.save({ taskId, requestId, state: { plan: ["second"] } })).resolves.toMatchObject({ version: 2 });
    expect(transactions).toHaveBeenCalledTimes(1);
    expect(await versionsOf(taskId)).toEqual([
      { version: 1, state: { plan: ["first"] } },
      { version: 2, state: { plan: ["second"] } },
    ]);
  });

  it("memory writes from many workers at once on one task all land, each its own version, none refused", async () => {
    const { agent, taskId, requestId } = await configuredThread({ rules: [{ match: { prefix: "mem." }, owner: "MEMORY" }] });
    const workers = Array.from({ length: 8 }, async (_, worker) => {
      for (let write = 0; write < 15; write++) await agent.state.remember({ taskId, requestId, memory: { [`mem.${worker}`]: write } });
    });
    await Promise.all(workers);
    const latest = await agent.state.load({ taskId });
    expect(latest.version).toBe(8 * 15);
    expect(latest.state).toEqual(Object.fromEntries(Array.from({ length: 8 }, (_, worker) => [`mem.${worker}`, 14])));
  });

  it("the insert itself refuses rules other than those read and a request that ended, and a version taken is a unique violation (the SQL, called directly)", async () => {
    const { agent, taskId, requestId } = await configuredThread(sharedPlan);
    const [config] = await db.prisma.$queryRaw<{ ownershipText: string }[]>`SELECT ownership::text AS "ownershipText" FROM "ThreadConfig" WHERE "taskId" = ${taskId}`;
    const ownershipText = config!.ownershipText;
    const run = <Row>(statement: Prisma.Sql) => app.deps.sql.query<Row>(statement);
    const write = (changes: Partial<Parameters<typeof insertVersionIfUnchanged>[1]>) =>
      insertVersionIfUnchanged(run, { workspaceId: app.workspaceId, taskId, requestId, version: 1, stateText: '{"plan":[]}', ownersText: "{}", sizeBytes: 11, ownershipText, now: new Date(), ...changes });

    expect(await write({ ownershipText: JSON.stringify(orchestratorOwnsPlan) })).toBe(false);
    expect(await write({ ownershipText: null })).toBe(false);
    expect(await write({})).toBe(true);
    await expect(write({})).rejects.toMatchObject({ code: "23505" });
    await agent.request.complete({ requestId, output: {} });
    expect(await write({ version: 2 })).toBe(false);
    expect(await versionsOf(taskId)).toEqual([{ version: 1, state: { plan: [] } }]);
  });
});
