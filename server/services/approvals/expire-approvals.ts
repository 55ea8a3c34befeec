// Timeouts: pending approvals whose time is up end through the same conditional
// write as a decision, so a decision racing the timeout either wins or finds it ended.
import { expiryEnding } from "../../domain/lifecycle.ts";
import { SYSTEM_ACTOR } from "../audit.ts";
import type { ServiceDeps } from "../deps.ts";
import { publishChanges, transact } from "../transaction.ts";
import { finishApproval } from "./finish-approval.ts";

/** Expires the pending approvals whose time is up (invariant 8). Returns how many. */
export async function expireDueApprovals(deps: ServiceDeps, limit = 100): Promise<number> {
  const now = deps.now();
  const due = await deps.prisma.approval.findMany({
    where: { status: "PENDING", expiresAt: { lte: now } },
    include: { task: { select: { agent: true } } },
    orderBy: { expiresAt: "asc" },
    take: limit,
  });
  let expired = 0;
  for (const approval of due) {
    const ending = expiryEnding(approval.onTimeout);
    // An approval on timeout is signed inside the transaction, where the embedded database could not also read the key.
    if (ending.action === "approve") await deps.receipts.warm(approval.workspaceId);
    const finished = await transact(deps, (tx) =>
      finishApproval(
        deps,
        tx,
        approval,
        { status: ending.status, action: ending.action, message: ending.message, decidedBy: ending.decidedBy, decidedById: null, deciderKind: "timeout" },
        SYSTEM_ACTOR,
        now,
      ),
    );
    if (finished) {
      expired += 1;
      publishChanges(deps, finished.changes);
    }
  }
  return expired;
}

/** The earliest expiry among pending approvals, for the timeout scheduler. */
export async function nextExpiry(deps: ServiceDeps): Promise<Date | null> {
  const next = await deps.prisma.approval.findFirst({
    where: { status: "PENDING", expiresAt: { not: null } },
    orderBy: { expiresAt: "asc" },
    select: { expiresAt: true },
  });
  return next?.expiresAt ?? null;
}
