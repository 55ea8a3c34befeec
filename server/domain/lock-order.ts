// The one rule of the global lock order (server/services/locks.ts) that an
// approval's opening can break by its shape alone, checked before it is written.

/**
 * The write takes the workspace's audit lock (lock order step 4) for a rule's
 * decision, then locks the chain's tasks (step 3) for a pending approval,
 * which would be the order inverted if one approval were both. None is: a
 * rule's decision is not pending, and a pending approval writes no audit
 * entry. Refused here, so that a change making one both fails at once rather
 * than deadlocking two nodes under load.
 */
export function assertLockOrder(opening: { approval: { status: string }; audit: unknown }): void {
  if (opening.audit && opening.approval.status === "PENDING") {
    throw new Error("a pending approval with an audit entry would lock its tasks after the workspace's audit head (lock order step 3 after step 4)");
  }
}
