// The one-time upgrade of audit chains that still hold entries in the unkeyed
// format of before (plain SHA-256 links, which anyone can recompute): each gets
// a keyed anchor entry naming its last unkeyed entry, after checking the chain.
// From then on verifyChain refuses unkeyed entries no anchor vouches for. It
// runs only at the start that applies the migration below, never again: run
// later, it would anchor a chain an intruder had rewritten in the meantime.
import { UNKEYED_ANCHOR_ACTION, walkChain } from "../domain/audit.ts";
import { log } from "../log.ts";
import { lockAuditHead, SYSTEM_ACTOR } from "./audit.ts";
import type { ServiceDeps } from "./deps.ts";

/** The migration whose application runs anchorUnkeyedChains, once. */
export const UNKEYED_ANCHOR_MIGRATION = "20261128001934_audit_unkeyed_anchored";

/** Anchors every chain with unkeyed entries that checks out; returns the workspaces anchored. */
export async function anchorUnkeyedChains(deps: ServiceDeps): Promise<string[]> {
  const chains = await deps.prisma.$queryRaw<{ workspaceId: string }[]>`
    SELECT DISTINCT "workspaceId" FROM "AuditEntry" WHERE "macVersion" = 0 ORDER BY "workspaceId"`;
  const anchored: string[] = [];
  for (const { workspaceId } of chains) {
    const now = deps.now();
    const done = await deps.prisma.$transaction(async (tx) => {
      await lockAuditHead(tx, workspaceId);
      const entries = await tx.auditEntry.findMany({ where: { workspaceId }, orderBy: { seq: "asc" } });
      const walk = deps.audit.walk(entries.map((entry) => ({ ...entry, data: entry.data ?? null })));
      if (!walk.verdict.ok) {
        log.error(`the audit log of workspace ${workspaceId} is broken at entry ${walk.verdict.brokenAtSeq} (${walk.verdict.reason}); its unkeyed entries are not anchored, so audit.verify keeps reporting it`);
        return false;
      }
      if (walk.lastUnkeyed === 0 || walk.anchored) return false;
      const through = entries[walk.lastUnkeyed - 1]!;
      await deps.audit.append(
        tx,
        workspaceId,
        { actor: SYSTEM_ACTOR, action: UNKEYED_ANCHOR_ACTION, subjectType: "audit_chain", subjectId: workspaceId, data: { throughSeq: through.seq, hash: through.hash } },
        now,
      );
      return true;
    });
    if (done) anchored.push(workspaceId);
  }
  if (anchored.length > 0) log.info(`anchored the unkeyed audit entries of ${anchored.length} workspaces with a keyed entry each (${UNKEYED_ANCHOR_ACTION})`);
  return anchored;
}
