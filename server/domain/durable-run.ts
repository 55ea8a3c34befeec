// Durable runs: the application's own id for a run of its agent, continued by
// whichever process starts with it next. One process drives a run at a time,
// under a lease that lapses when its holder stops renewing it.
import { DomainError } from "./errors.ts";

/** How long a lease lasts unless renewed; a holder renews it at a third of this. */
export const RUN_LEASE_MS = 30_000;

export interface RunLease {
  leaseHolder: string | null;
  leaseExpiresAt: Date | null;
}

/**
 * Whether another process holds the lease now (a lapsed lease is nobody's).
 * `replacing` names a holder the caller knows to be dead (the process it was
 * started in place of): its lease is the caller's to take at once.
 */
export function heldByOther(lease: RunLease, holder: string, now: Date, replacing?: string): boolean {
  if (lease.leaseHolder === null || lease.leaseHolder === holder || lease.leaseHolder === replacing) return false;
  return lease.leaseExpiresAt !== null && lease.leaseExpiresAt > now;
}

export function runDrivenElsewhere(runId: string, lease: RunLease): DomainError {
  return new DomainError(
    "CONFLICT",
    `run "${runId}" is driven by another live process (${lease.leaseHolder}) until ${lease.leaseExpiresAt?.toISOString()} unless it renews its lease; ` +
      "start this one again after that process has stopped, or give this run of the agent another runId",
    { runId, leaseExpiresAt: lease.leaseExpiresAt?.toISOString() ?? null },
  );
}

/** The claim key the SDK sends is "<holder>:<approval id>": the holder is the process that claimed. */
export const claimantOf = (claimKey: string, approvalId: string): string | null =>
  claimKey.endsWith(`:${approvalId}`) ? claimKey.slice(0, -approvalId.length - 1) : null;
