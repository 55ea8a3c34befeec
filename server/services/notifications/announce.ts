// Writes an approval's announcements: one Notification row per channel it is
// announced on, in the caller's transaction, so an approval is never without
// its announcements and an announcement never without its approval. The
// notification deliverer sends them.
import { newId } from "../../domain/ids.ts";
import type { AnnouncementReason } from "../../domain/notification-message.ts";
import type { ServiceDeps, Tx } from "../deps.ts";
import { enabledChannelsFor } from "./channel-cache.ts";

/** The channel key of the approvers' email when only TOLLGATE_SMTP_URL is configured. */
export const SMTP_DEFAULT_CHANNEL = "smtp-default";

export interface Announcement {
  workspaceId: string;
  approvalId: string;
  reason: AnnouncementReason;
  level: number;
  /** Channel names the route asks for; absent: every enabled channel. */
  channels?: string[];
  /** The workspace's channelVersion, as read in this transaction. */
  channelVersion: number;
}

/**
 * One statement at most: none when there is nowhere to announce. With no
 * channel configured and TOLLGATE_SMTP_URL set, the operators asked are emailed.
 */
export async function announce(deps: ServiceDeps, tx: Tx, announcement: Announcement, now: Date): Promise<number> {
  const enabled = await enabledChannelsFor(deps.channelCache, tx, announcement.workspaceId, announcement.channelVersion);
  const named = announcement.channels;
  const targets =
    enabled.length > 0
      ? enabled.filter((channel) => !named || named.includes(channel.name)).map((channel) => ({ channelId: channel.id, channelKey: channel.id, kind: channel.kind }))
      : deps.mailer
        ? [{ channelId: null, channelKey: SMTP_DEFAULT_CHANNEL, kind: "EMAIL" as const }]
        : [];
  if (targets.length === 0) return 0;
  const { count } = await tx.notification.createMany({
    data: targets.map((target) => ({
      id: newId("ntf"),
      workspaceId: announcement.workspaceId,
      approvalId: announcement.approvalId,
      ...target,
      reason: announcement.reason,
      level: announcement.level,
      nextAttemptAt: now,
      createdAt: now,
    })),
    // Announced once per channel, reason and step, however often this is retried.
    skipDuplicates: true,
  });
  return count;
}
