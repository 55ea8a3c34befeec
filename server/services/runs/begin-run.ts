// Begins or continues a durable run: the request in progress under the
// application's runId is continued (same request, same approvals, no second
// ask), a new runId begins a run, and a runId whose request ended begins a
// follow-on request in the same task.
import { Prisma } from "../../db/generated/client.ts";
import { heldByOther, RUN_LEASE_MS, runDrivenElsewhere } from "../../domain/durable-run.ts";
import { DomainError } from "../../domain/errors.ts";
import { newId } from "../../domain/ids.ts";
import { isActive } from "../../domain/lifecycle.ts";
import type { AgentPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps } from "../deps.ts";
import { beginRequest, type BeginRequestInput } from "../requests.ts";
import { transact } from "../transaction.ts";
import { openRunState } from "./run-state.ts";

export interface BeginRunInput extends Omit<BeginRequestInput, "idempotencyKey"> {
  runId: string;
  /** The process that will drive the run (the SDK's replica id). */
  holder: string;
  /** The holder of a process that died, this one started in place of it: its lease is taken over at once. */
  replacing?: string;
}

export interface BegunRun {
  runId: string;
  sessionId: string;
  taskId: string;
  requestId: string;
  /** True when the run's request was already in progress: the caller continues it. */
  continued: boolean;
  /** What the adapter kept to continue (run.save), for a continued run; else null. */
  state: string | null;
  leaseExpiresAt: string;
}

interface RunRow {
  id: string;
  sessionId: string;
  taskId: string | null;
  requestId: string | null;
  turn: number;
  leaseHolder: string | null;
  leaseExpiresAt: Date | null;
  state: string | null;
}

export async function beginRun(deps: ServiceDeps, agent: AgentPrincipal, input: BeginRunInput): Promise<BegunRun> {
  const now = deps.now();
  const leaseExpiresAt = new Date(now.getTime() + RUN_LEASE_MS);
  // 1. The lease, taken behind the run's row lock (the row made on first use):
  //    of two processes starting the same run, the second finds it held.
  const taken = await transact(deps, async (tx) => {
    await tx.$executeRaw`
      INSERT INTO "DurableRun" (id, "workspaceId", "agentKeyId", "runId", "sessionId", "createdAt", "updatedAt")
      VALUES (${newId("run")}, ${agent.workspaceId}, ${agent.agentKeyId}, ${input.runId}, ${input.sessionId}, ${now}::timestamp(3), ${now}::timestamp(3))
      ON CONFLICT ("agentKeyId", "runId") DO NOTHING`;
    const [run] = await tx.$queryRaw<RunRow[]>`
      SELECT id, "sessionId", "taskId", "requestId", turn, "leaseHolder", "leaseExpiresAt", state
      FROM "DurableRun" WHERE "agentKeyId" = ${agent.agentKeyId} AND "runId" = ${input.runId} FOR UPDATE`;
    if (!run) throw new Error(`durable run ${input.runId} vanished while it was being begun`);
    const current = run.requestId
      ? await tx.request.findUnique({ where: { id: run.requestId }, select: { status: true, sessionId: true, taskId: true, task: { select: { agent: true } } } })
      : null;
    // Another agent of the key naming the same runId (two apps' examples both
    // using "refund-42") must not be handed this run's request and the state
    // this agent's adapter kept.
    if (current && current.task.agent !== input.agent) {
      throw new DomainError("BAD_INPUT", `runId "${input.runId}" is a run of agent "${current.task.agent}"; agent "${input.agent}" needs a runId of its own`);
    }
    if (heldByOther(run, input.holder, now, input.replacing)) throw runDrivenElsewhere(input.runId, run);
    const inProgress = current !== null && isActive(current.status);
    // A run whose request ended goes on in a new one: its next turn.
    const turn = run.requestId && !inProgress ? run.turn + 1 : run.turn;
    await tx.durableRun.update({
      where: { id: run.id },
      data: { leaseHolder: input.holder, leaseExpiresAt, turn, ...(inProgress ? {} : { state: null }) },
    });
    return { run, current: inProgress ? current : null, turn };
  });
  const { run } = taken;
  if (taken.current) {
    return {
      runId: input.runId,
      sessionId: taken.current.sessionId,
      taskId: taken.current.taskId,
      requestId: run.requestId!,
      continued: true,
      state: run.state ? openRunState(deps, run.id, run.state) : null,
      leaseExpiresAt: leaseExpiresAt.toISOString(),
    };
  }
  // 2. The run's next request: the first in the session the run began in,
  //    later ones following on in its task. Its idempotency key names the
  //    turn, so a process that dies before step 3 leaves it to be found again.
  const begun = await beginRequest(deps, agent, {
    ...input,
    sessionId: run.sessionId,
    taskId: run.taskId ?? input.taskId,
    idempotencyKey: `run:${run.id}:${taken.turn}`,
  });
  // 3. The run names its request, and the request its run (for the console and the webhook).
  await deps.prisma.$transaction([
    deps.prisma.durableRun.updateMany({
      where: { id: run.id, leaseHolder: input.holder },
      data: { requestId: begun.requestId, taskId: begun.taskId, sessionId: begun.sessionId },
    }),
    deps.prisma.$executeRaw(Prisma.sql`UPDATE "Request" SET "runId" = ${input.runId} WHERE id = ${begun.requestId}`),
  ]);
  return { runId: input.runId, ...begun, continued: false, state: null, leaseExpiresAt: leaseExpiresAt.toISOString() };
}
