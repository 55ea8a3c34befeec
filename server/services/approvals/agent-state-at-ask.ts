// The review screen's view of what the agent believed when it asked: its task's
// thread state as saved by then (each key with its owner), and what changed in
// it since the task's previous ask. Reads only.
import { notFound } from "../../domain/errors.ts";
import type { KeyOwnership } from "../../domain/thread/ownership.ts";
import type { ServiceDeps } from "../deps.ts";
import { stateDiff, stateVersion } from "../thread-state.ts";

export async function agentStateAtAsk(deps: ServiceDeps, workspaceId: string, approvalId: string) {
  const approval = await deps.prisma.approval.findFirst({ where: { id: approvalId, workspaceId }, select: { taskId: true, createdAt: true } });
  if (!approval) throw notFound("approval", approvalId);
  const { taskId } = approval;
  // The latest version saved by a moment (0: none yet): the state as the agent had it then.
  const versionAt = async (at: Date | null) => {
    const row = await deps.prisma.agentStateVersion.findFirst({
      where: { taskId, workspaceId, ...(at ? { createdAt: { lte: at } } : {}) },
      orderBy: { version: "desc" },
      select: { version: true },
    });
    return row?.version ?? 0;
  };
  const [atAsk, latest, previousAsk] = await Promise.all([
    versionAt(approval.createdAt),
    versionAt(null),
    deps.prisma.approval.findFirst({
      where: { taskId, workspaceId, createdAt: { lt: approval.createdAt } },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      select: { id: true, tool: true, createdAt: true },
    }),
  ]);
  const state = atAsk > 0 ? await stateVersion(deps, workspaceId, taskId, atAsk) : null;
  const previous = previousAsk ? { approvalId: previousAsk.id, tool: previousAsk.tool, askedAt: previousAsk.createdAt.toISOString(), version: await versionAt(previousAsk.createdAt) } : null;
  const change = previous && previous.version !== atAsk ? await stateDiff(deps, workspaceId, { taskId, fromVersion: previous.version, toVersion: atAsk }) : null;
  return {
    taskId,
    /** The version the agent had saved when it asked; null when it had saved none. */
    atAsk: state && { version: state.version, savedAt: state.createdAt, sizeBytes: state.sizeBytes, state: state.state, owners: state.owners as Record<string, KeyOwnership> },
    /** Versions saved since the ask (the agent went on, or another agent wrote). */
    newerVersions: latest - atAsk,
    /** The task's ask before this one, with the version it was made on. */
    previous,
    /** From the previous ask's version to this one's; null without a previous ask or when nothing was saved between. */
    change: change && { fromVersion: change.fromVersion, toVersion: change.toVersion, keys: change.keys },
  };
}
