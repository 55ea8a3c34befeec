// An admin removes a channel. What it already sent stays on the approvals
// (the rows keep their channel key); what it had not sent yet is dropped.
import { notFound } from "../../domain/errors.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps } from "../deps.ts";
import { operatorActor } from "../policies/create-policy.ts";
import { transact } from "../transaction.ts";
import { bumpChannelVersion } from "./channel-cache.ts";
import { channelView } from "./channel-views.ts";

export async function deleteChannel(deps: ServiceDeps, admin: OperatorPrincipal, channelId: string): Promise<{ ok: true }> {
  const now = deps.now();
  return transact(deps, async (tx) => {
    const channel = await tx.notificationChannel.findFirst({ where: { id: channelId, workspaceId: admin.workspaceId } });
    if (!channel) throw notFound("channel", channelId);
    await tx.notification.updateMany({ where: { channelId, status: "PENDING" }, data: { status: "FAILED", lastError: "the channel was deleted before this was sent" } });
    await tx.notificationChannel.delete({ where: { id: channelId } });
    await bumpChannelVersion(tx, admin.workspaceId);
    await deps.audit.append(tx, admin.workspaceId, { actor: operatorActor(admin), action: "channel.deleted", subjectType: "channel", subjectId: channelId, data: channelView(channel) }, now);
    return { ok: true as const };
  });
}
