// The enabled notification channels per workspace, as approval.request needs
// them to write its announcements. A node keeps them between calls and
// re-reads when the workspace's channelVersion (bumped by every channel
// change, read in the caller's transaction) differs.
import { LRUCache } from "lru-cache";
import type { ChannelKind } from "../../db/generated/client.ts";
import type { Tx } from "../deps.ts";

export interface CachedChannel {
  id: string;
  name: string;
  kind: ChannelKind;
}

export type ChannelCache = LRUCache<string, { version: number; channels: CachedChannel[] }>;

export const newChannelCache = (): ChannelCache => new LRUCache({ max: 10_000 });

export async function enabledChannelsFor(cache: ChannelCache, tx: Tx, workspaceId: string, version: number): Promise<CachedChannel[]> {
  const cached = cache.get(workspaceId);
  if (cached && cached.version === version) return cached.channels;
  const channels = await tx.notificationChannel.findMany({
    where: { workspaceId, enabled: true },
    select: { id: true, name: true, kind: true },
    orderBy: { createdAt: "asc" },
  });
  cache.set(workspaceId, { version, channels });
  return channels;
}

/** Marks the workspace's channels changed; call inside the transaction that changes them. */
export async function bumpChannelVersion(tx: Tx, workspaceId: string): Promise<void> {
  await tx.workspace.update({ where: { id: workspaceId }, data: { channelVersion: { increment: 1 } } });
}
