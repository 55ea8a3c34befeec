// Reads for the console: a workspace's channels, and what was sent about an approval.
import { channelHealth } from "../../domain/channel-health.ts";
import { notFound } from "../../domain/errors.ts";
import type { ServiceDeps } from "../deps.ts";
import { SMTP_DEFAULT_CHANNEL } from "./announce.ts";
import { channelView } from "./channel-views.ts";

const RECENT_ANNOUNCEMENTS = 10;

export async function listChannels(deps: ServiceDeps, workspaceId: string) {
  const rows = await deps.prisma.notificationChannel.findMany({ where: { workspaceId }, orderBy: { createdAt: "asc" } });
  // Each channel's latest announcements, for whether it is failing (a workspace has a few channels).
  const latest = await Promise.all(
    rows.map((row) =>
      deps.prisma.notification.findMany({
        where: { workspaceId, channelId: row.id },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        take: RECENT_ANNOUNCEMENTS,
        select: { status: true, attempts: true, lastError: true },
      }),
    ),
  );
  return { channels: rows.map((row, index) => ({ ...channelView(row), health: channelHealth(latest[index]!) })), smtpConfigured: deps.mailer !== undefined };
}

/** "emailed ops@… at 12:03, delivered": every announcement of an approval, oldest first. */
export async function notificationsOf(deps: ServiceDeps, workspaceId: string, approvalId: string) {
  // Another workspace's approval (or none) is NOT_FOUND, not an empty list that confirms nothing.
  const approval = await deps.prisma.approval.findFirst({ where: { id: approvalId, workspaceId }, select: { id: true } });
  if (!approval) throw notFound("approval", approvalId);
  const rows = await deps.prisma.notification.findMany({
    where: { workspaceId, approvalId },
    include: { channel: { select: { name: true } } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  return rows.map((row) => ({
    notificationId: row.id,
    channel: row.channel?.name ?? (row.channelKey === SMTP_DEFAULT_CHANNEL ? "approvers' email" : "(deleted channel)"),
    kind: row.kind,
    reason: row.reason,
    level: row.level,
    status: row.status,
    attempts: row.attempts,
    recipients: row.recipients,
    digestSize: row.digestSize,
    lastError: row.lastError,
    createdAt: row.createdAt.toISOString(),
    deliveredAt: row.deliveredAt?.toISOString() ?? null,
  }));
}
