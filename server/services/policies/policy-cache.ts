// Compiled rules per workspace. A node keeps them compiled between calls and
// recompiles when the workspace's policyVersion (bumped by every change, read
// in the caller's transaction) differs, so every node sees a change at once.
import { LRUCache } from "lru-cache";
import { compilePolicySet, type PolicySet } from "../../domain/policy.ts";
import type { Tx } from "../deps.ts";
import { ruleOf } from "./policy-rows.ts";

export type PolicyCache = LRUCache<string, { version: number; set: PolicySet }>;

export const newPolicyCache = (): PolicyCache => new LRUCache({ max: 10_000 });

export async function policySetFor(cache: PolicyCache, tx: Tx, workspaceId: string, version: number): Promise<PolicySet> {
  const cached = cache.get(workspaceId);
  if (cached && cached.version === version) return cached.set;
  const rows = await tx.policy.findMany({ where: { workspaceId } });
  const set = compilePolicySet(rows.map(ruleOf));
  cache.set(workspaceId, { version, set });
  return set;
}

/** Marks the workspace's rules changed; call inside the transaction that changes them. */
export async function bumpPolicyVersion(tx: Tx, workspaceId: string): Promise<number> {
  const updated = await tx.workspace.update({ where: { id: workspaceId }, data: { policyVersion: { increment: 1 } }, select: { policyVersion: true } });
  return updated.policyVersion;
}
