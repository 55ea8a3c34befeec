// Client sessions: opened by agents, listed for the console with status counts.
import { Prisma } from "../db/generated/client.ts";
import { DomainError } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import type { ServiceDeps } from "./deps.ts";

export interface OpenSessionInput {
  sessionId?: string;
  title?: string;
  metadata?: Record<string, unknown>;
}

/** Opens a session, or returns the caller's existing one when its id is given. */
export async function openSession(deps: ServiceDeps, workspaceId: string, input: OpenSessionInput) {
  if (input.sessionId) {
    const existing = await deps.prisma.session.findFirst({ where: { id: input.sessionId, workspaceId } });
    if (existing) return { sessionId: existing.id };
    throw new DomainError("NOT_FOUND", `session ${input.sessionId} does not exist in this workspace; omit sessionId to open a new one`);
  }
  const session = await deps.prisma.session.create({
    data: {
      id: newId("ses"),
      workspaceId,
      title: input.title ?? null,
      metadata: input.metadata ? (input.metadata as Prisma.InputJsonValue) : Prisma.DbNull,
      createdAt: deps.now(),
    },
  });
  deps.bus.publish("session:updated", { workspaceId, sessionId: session.id });
  return { sessionId: session.id };
}

export async function listSessions(deps: ServiceDeps, workspaceId: string, limit = 200) {
  const sessions = await deps.prisma.session.findMany({
    where: { workspaceId },
    orderBy: { createdAt: "desc" },
    take: limit,
  });
  const counts = await deps.prisma.task.groupBy({
    by: ["sessionId", "status"],
    where: { workspaceId, sessionId: { in: sessions.map((session) => session.id) } },
    _count: { _all: true },
  });
  const pending = await deps.prisma.approval.groupBy({
    by: ["sessionId"],
    where: { workspaceId, status: "PENDING", sessionId: { in: sessions.map((session) => session.id) } },
    _count: { _all: true },
  });
  return sessions.map((session) => {
    const taskCounts: Record<string, number> = { RUNNING: 0, PAUSED: 0, COMPLETED: 0, FAILED: 0, CANCELED: 0 };
    for (const row of counts) if (row.sessionId === session.id) taskCounts[row.status] = row._count._all;
    return {
      id: session.id,
      title: session.title,
      status: session.status,
      createdAt: session.createdAt.toISOString(),
      taskCounts,
      pendingApprovals: pending.find((row) => row.sessionId === session.id)?._count._all ?? 0,
    };
  });
}
