// The rules of a workspace in evaluation order, for the editor and the API.
import { compareRules } from "../../domain/policy.ts";
import type { ServiceDeps } from "../deps.ts";
import { policyView, ruleOf, type PolicyView } from "./policy-rows.ts";

export async function listPolicies(deps: ServiceDeps, workspaceId: string): Promise<PolicyView[]> {
  const rows = await deps.prisma.policy.findMany({ where: { workspaceId } });
  return rows.sort((a, b) => compareRules(ruleOf(a), ruleOf(b))).map(policyView);
}
