// Notification channels as the API shows them: never the URL's secret path or the signing secret.
import type { NotificationChannel } from "../../db/generated/client.ts";

export function channelView(row: NotificationChannel) {
  return {
    channelId: row.id,
    name: row.name,
    kind: row.kind,
    emails: row.emails,
    /** Only the origin of the URL: incoming-webhook URLs are secrets. */
    urlOrigin: row.urlOrigin,
    signed: row.secretEncrypted !== null,
    digestThreshold: row.digestThreshold,
    digestWindowSeconds: row.digestWindowSeconds,
    enabled: row.enabled,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
  };
}

export type ChannelView = ReturnType<typeof channelView>;

/** What a sealed value of a channel is bound to: it cannot be moved to another row or field. */
export const sealContext = (channelId: string, field: "url" | "secret") => `NotificationChannel/${channelId}/${field}`;
