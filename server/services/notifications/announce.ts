// Writes an approval's announcements: one Notification row per channel it is
// announced on, in the caller's transaction, so an approval is never without
// its announcements and an announcement never without its approval. The
// notification deliverer sends them.
import type { ChannelKind } from "../../db/generated/client.ts";
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

/** A Notification row to write: one channel an approval is announced on. */
export interface AnnouncementRow {
  id: string;
  workspaceId: string;
  approvalId: string;
  channelId: string | null;
  channelKey: string;
  kind: ChannelKind;
  reason: AnnouncementReason;
  level: number;
  nextAttemptAt: Date;
  createdAt: Date;
}

/**
 * The rows announcing an approval: one per enabled channel the route names
 * (every enabled one when it names none); with no channel configured and
 * TOLLGATE_SMTP_URL set, the operators asked are emailed. A statement only
 * when the channel cache is out of date.
 */
export async function announcementRows(deps: ServiceDeps, tx: Tx, announcement: Announcement, now: Date): Promise<AnnouncementRow[]> {
  const enabled = await enabledChannelsFor(deps.channelCache, tx, announcement.workspaceId, announcement.channelVersion);
  const named = announcement.channels;
  const targets =
    enabled.length > 0
      ? enabled.filter((channel) => !named || named.includes(channel.name)).map((channel) => ({ channelId: channel.id, channelKey: channel.id, kind: channel.kind }))
      : deps.mailer
        ? [{ channelId: null, channelKey: SMTP_DEFAULT_CHANNEL, kind: "EMAIL" as const }]
        : [];
  return targets.map((target) => ({
    id: newId("ntf"),
    workspaceId: announcement.workspaceId,
    approvalId: announcement.approvalId,
    ...target,
    reason: announcement.reason,
    level: announcement.level,
    nextAttemptAt: now,
    createdAt: now,
  }));
}

/** Writes an approval's announcements: one statement at most, none when there is nowhere to announce. */
export async function announce(deps: ServiceDeps, tx: Tx, announcement: Announcement, now: Date): Promise<number> {
  const rows = await announcementRows(deps, tx, announcement, now);
  if (rows.length === 0) return 0;
  // Announced once per channel, reason and step, however often this is retried.
  const { count } = await tx.notification.createMany({ data: rows, skipDuplicates: true });
  return count;
}
