// The workspace default gate: what applies when no rule matches. A person
// decides; an undecided approval fails closed after the configured time.
import { Prisma } from "../../db/generated/client.ts";
import { DomainError, notFound } from "../../domain/errors.ts";
import { routeProblem, type Route } from "../../domain/routing.ts";
import { assertRouteChannelsExist } from "../notifications/route-channels.ts";
import type { WorkspaceDefaultGate } from "../../domain/policy.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps } from "../deps.ts";
import { transact } from "../transaction.ts";
import { operatorActor } from "./create-policy.ts";

/** The default gate and who it asks. */
export type WorkspaceDefaults = WorkspaceDefaultGate & { route: Route | null };

export async function workspaceGate(deps: ServiceDeps, workspaceId: string): Promise<WorkspaceDefaults> {
  const workspace = await deps.prisma.workspace.findUnique({ where: { id: workspaceId }, select: { defaultTimeoutMs: true, defaultOnTimeout: true, defaultRoute: true } });
  if (!workspace) throw notFound("workspace", workspaceId);
  return {
    timeoutMs: workspace.defaultTimeoutMs,
    onTimeout: workspace.defaultOnTimeout === "cancel" ? "cancel" : "reject",
    route: (workspace.defaultRoute as Route | null) ?? null,
  };
}

export async function setWorkspaceGate(deps: ServiceDeps, operator: OperatorPrincipal, input: WorkspaceDefaultGate & { route?: Route | null }): Promise<WorkspaceDefaults> {
  // An absent route keeps the one set; null clears it.
  const now = deps.now();
  return transact(deps, async (tx) => {
    const problem = input.route ? routeProblem(input.route) : null;
    if (problem) throw new DomainError("BAD_INPUT", problem);
    await assertRouteChannelsExist(tx, operator.workspaceId, input.route);
    const updated = await tx.workspace.update({
      where: { id: operator.workspaceId },
      data: {
        defaultTimeoutMs: input.timeoutMs,
        defaultOnTimeout: input.onTimeout,
        ...(input.route !== undefined ? { defaultRoute: input.route ? (input.route as Prisma.InputJsonValue) : Prisma.DbNull } : {}),
      },
      select: { defaultRoute: true },
    });
    const gate: WorkspaceDefaults = { timeoutMs: input.timeoutMs, onTimeout: input.onTimeout, route: (updated.defaultRoute as Route | null) ?? null };
    await deps.audit.append(tx,
      operator.workspaceId,
      { actor: operatorActor(operator), action: "policy.default_changed", subjectType: "workspace", subjectId: operator.workspaceId, data: gate },
      now,
    );
    return gate;
  });
}
