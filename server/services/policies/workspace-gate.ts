// The workspace default gate: what applies when no rule matches. A person
// decides; an undecided approval fails closed after the configured time.
import { notFound } from "../../domain/errors.ts";
import type { WorkspaceDefaultGate } from "../../domain/policy.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps } from "../deps.ts";
import { transact } from "../transaction.ts";
import { operatorActor } from "./create-policy.ts";

export async function workspaceGate(deps: ServiceDeps, workspaceId: string): Promise<WorkspaceDefaultGate> {
  const workspace = await deps.prisma.workspace.findUnique({ where: { id: workspaceId }, select: { defaultTimeoutMs: true, defaultOnTimeout: true } });
  if (!workspace) throw notFound("workspace", workspaceId);
  return { timeoutMs: workspace.defaultTimeoutMs, onTimeout: workspace.defaultOnTimeout === "cancel" ? "cancel" : "reject" };
}

export async function setWorkspaceGate(deps: ServiceDeps, operator: OperatorPrincipal, gate: WorkspaceDefaultGate): Promise<WorkspaceDefaultGate> {
  const now = deps.now();
  return transact(deps, async (tx) => {
    await tx.workspace.update({ where: { id: operator.workspaceId }, data: { defaultTimeoutMs: gate.timeoutMs, defaultOnTimeout: gate.onTimeout } });
    await deps.audit.append(tx,
      operator.workspaceId,
      { actor: operatorActor(operator), action: "policy.default_changed", subjectType: "workspace", subjectId: operator.workspaceId, data: gate },
      now,
    );
    return gate;
  });
}
