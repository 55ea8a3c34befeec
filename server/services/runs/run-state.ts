// What an adapter keeps to continue a durable run (its framework's serialised
// run state, the step's assistant message), sealed at rest and bound to its
// run; and the lease its driving process renews while it lives.
import { heldByOther, RUN_LEASE_MS, runDrivenElsewhere } from "../../domain/durable-run.ts";
import { DomainError, notFound } from "../../domain/errors.ts";
import { isActive } from "../../domain/lifecycle.ts";
import type { AgentPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps } from "../deps.ts";
import { transact } from "../transaction.ts";

const stateContext = (runRowId: string) => `${runRowId}:state`;

export function openRunState(deps: ServiceDeps, runRowId: string, sealed: string): string {
  const state = deps.runStates.open(sealed, stateContext(runRowId));
  if (state === undefined) throw new DomainError("PRECONDITION_FAILED", "the run's saved state cannot be opened with this server's TOLLGATE_SECRET");
  return state;
}

export interface RunLeaseInput {
  runId: string;
  holder: string;
}

/**
 * Holds the run's lease for `holder` for another RUN_LEASE_MS; CONFLICT when
 * another process holds it now (this one was presumed dead and replaced: it
 * must stop), PRECONDITION_FAILED when the run's request has ended.
 * With `state`, also keeps (or with null, forgets) what the adapter needs to continue.
 */
export async function holdRun(deps: ServiceDeps, agent: AgentPrincipal, input: RunLeaseInput & { state?: string | null }): Promise<{ runId: string; leaseExpiresAt: string }> {
  const now = deps.now();
  const leaseExpiresAt = new Date(now.getTime() + RUN_LEASE_MS);
  return transact(deps, async (tx) => {
    const [run] = await tx.$queryRaw<{ id: string; requestId: string | null; leaseHolder: string | null; leaseExpiresAt: Date | null }[]>`
      SELECT id, "requestId", "leaseHolder", "leaseExpiresAt" FROM "DurableRun"
      WHERE "agentKeyId" = ${agent.agentKeyId} AND "runId" = ${input.runId} FOR UPDATE`;
    if (!run) throw notFound("run", input.runId);
    if (heldByOther(run, input.holder, now)) throw runDrivenElsewhere(input.runId, run);
    const request = run.requestId ? await tx.request.findUnique({ where: { id: run.requestId }, select: { status: true } }) : null;
    if (!request || !isActive(request.status)) {
      throw new DomainError("PRECONDITION_FAILED", `run "${input.runId}" has no request in progress; begin it again (run.begin) to go on`);
    }
    const state = input.state === undefined ? {} : { state: input.state === null ? null : deps.runStates.seal(input.state, stateContext(run.id)) };
    await tx.durableRun.update({ where: { id: run.id }, data: { leaseHolder: input.holder, leaseExpiresAt, ...state } });
    return { runId: input.runId, leaseExpiresAt: leaseExpiresAt.toISOString() };
  });
}

/** A holder's process has gone (its held connection closed): its runs' leases lapse now, so a new process can take over at once. */
export async function releaseRunsOf(deps: ServiceDeps, agentKeyId: string, holder: string): Promise<void> {
  const now = deps.now();
  await deps.prisma.durableRun.updateMany({ where: { agentKeyId, leaseHolder: holder, leaseExpiresAt: { gt: now } }, data: { leaseExpiresAt: now } });
}
