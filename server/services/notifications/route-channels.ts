// A route may only name channels the workspace has.
import { DomainError } from "../../domain/errors.ts";
import { routeProblem, type Route } from "../../domain/routing.ts";
import type { Tx } from "../deps.ts";

/** Throws BAD_INPUT naming the field when a route names a channel the workspace does not have. */
export async function assertRouteChannelsExist(tx: Tx, workspaceId: string, route: Route | null | undefined): Promise<void> {
  const named = route ? [...(route.channels ?? []), ...(route.escalate ?? []).flatMap((step) => step.channels ?? [])] : [];
  if (named.length === 0) return;
  const channels = await tx.notificationChannel.findMany({ where: { workspaceId, name: { in: named } }, select: { name: true } });
  const problem = routeProblem(route!, new Set(channels.map((channel) => channel.name)));
  if (problem) throw new DomainError("BAD_INPUT", problem);
}
