// Runs a use case's writes in one transaction, retrying the rare deadlock or
// serialization failure, and publishes the resulting status changes only
// after the commit.
import { decisionPayload } from "./approvals/approval-views.ts";
import type { Changes } from "./cascade.ts";
import type { ServiceDeps, Tx } from "./deps.ts";

const RETRYABLE = /deadlock detected|could not serialize|P2034|40P01|40001/;

export function transact<T>(deps: ServiceDeps, work: (tx: Tx) => Promise<T>): Promise<T> {
  return withRetries(() => deps.prisma.$transaction(work, { maxWait: 10_000, timeout: 20_000 }));
}

/** Retries before giving up: `attempt` runs this many times at most. */
export const ATTEMPTS = 4;

/**
 * Runs `attempt` (told which try it is, from 1 to ATTEMPTS) again when it
 * failed with an error `retryable` accepts: by default a deadlock or a
 * serialization failure.
 */
export async function withRetries<T>(attempt: (tries: number) => Promise<T>, retryable: (error: unknown) => boolean = isDeadlockOrSerializationFailure): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt(tries);
    } catch (error) {
      if (tries >= ATTEMPTS || !retryable(error)) throw error;
    }
  }
}

function isDeadlockOrSerializationFailure(error: unknown): boolean {
  const text = error instanceof Error ? `${error.message} ${(error as { code?: string }).code ?? ""}` : "";
  return RETRYABLE.test(text);
}

export function publishChanges(deps: ServiceDeps, changes: Changes): void {
  for (const approval of changes.approvals) {
    deps.bus.publish("approval:decided", {
      workspaceId: approval.workspaceId,
      sessionId: approval.sessionId,
      taskId: approval.taskId,
      approvalId: approval.id,
      requestId: approval.requestId,
      agentKeyId: approval.agentKeyId,
      status: approval.status,
      decision: decisionPayload(approval) ?? null,
      requestedAt: approval.createdAt.toISOString(),
    });
  }
  // The consoles' status updates go out on the next turn of the event loop,
  // after the transport has written the caller's answer in this one, so the
  // agent waits for none of their socket writes; a decision above is pushed
  // at once. Updates keep their order: setImmediate runs first in, first out.
  const { requests, tasks } = changes;
  if (requests.length > 0 || tasks.length > 0) {
    setImmediate(() => {
      for (const change of requests) deps.bus.publish("request:updated", change);
      for (const change of tasks) deps.bus.publish("task:updated", change);
    });
  }
  if (changes.deliveriesQueued > 0) deps.bus.publish("webhook:queued", { count: changes.deliveriesQueued });
}

/**
 * True for a unique-constraint violation (another writer got there first):
 * Prisma's own, or PostgreSQL's 23505 from a raw or direct statement or SQL function.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, meta } = error as { code?: string; meta?: { code?: string; driverAdapterError?: { cause?: { originalCode?: string } } } };
  if (code === "P2002" || code === "23505") return true;
  return code === "P2010" && (meta?.code === "23505" || meta?.driverAdapterError?.cause?.originalCode === "23505");
}
