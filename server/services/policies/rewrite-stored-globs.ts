// Rules written before tool and agent names were compared in one form (NFKC,
// case-folded) get their agent and tool globs rewritten into that form at
// start, once: "Send_Email" becomes "send_email", which now also matches
// "SEND_EMAIL" and "ｓend_email". Each such rule keeps what it was written as
// (matchRewrittenFrom) for the console to show until an admin saves it again,
// gets a new version, and the workspace's audit log records the rewrite.
import type { Policy } from "../../db/generated/client.ts";
import { comparableMatch, type PolicyMatch } from "../../domain/policy.ts";
import { SYSTEM_ACTOR } from "../audit.ts";
import type { ServiceDeps } from "../deps.ts";
import { transact } from "../transaction.ts";
import { bumpPolicyVersion } from "./policy-cache.ts";

/** Rewrites every stored rule whose globs are not in the compared form; returns how many it rewrote. */
export async function rewriteStoredGlobs(deps: ServiceDeps): Promise<number> {
  const rows = await deps.prisma.policy.findMany({ select: { id: true, workspaceId: true, version: true, match: true } });
  let rewritten = 0;
  for (const row of rows) {
    const written = row.match as PolicyMatch;
    const folded = comparableMatch(written);
    const from = {
      ...(folded.agent !== written.agent ? { agent: written.agent } : {}),
      ...(folded.tool !== written.tool ? { tool: written.tool } : {}),
    };
    if (Object.keys(from).length === 0) continue;
    const to = { ...(from.agent !== undefined ? { agent: folded.agent } : {}), ...(from.tool !== undefined ? { tool: folded.tool } : {}) };
    const done = await transact(deps, async (tx) => {
      // Conditional on the version read: another node starting at the same time rewrites it once.
      const { count } = await tx.policy.updateMany({
        where: { id: row.id, version: row.version },
        data: { match: folded as Policy["match"] & object, matchRewrittenFrom: from, version: { increment: 1 } },
      });
      if (count === 0) return false;
      await bumpPolicyVersion(tx, row.workspaceId);
      await deps.audit.append(
        tx,
        row.workspaceId,
        {
          actor: SYSTEM_ACTOR,
          action: "policy.rewritten",
          subjectType: "policy",
          subjectId: row.id,
          data: { reason: "tool and agent names are compared case- and width-insensitively (NFKC, case-folded)", before: from, after: to },
        },
        deps.now(),
      );
      return true;
    });
    if (done) rewritten += 1;
  }
  return rewritten;
}
