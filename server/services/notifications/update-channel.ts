// An admin changes a channel: its recipients or URL, its digest, or turns it off.
import { DomainError, notFound } from "../../domain/errors.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps } from "../deps.ts";
import { operatorActor } from "../policies/create-policy.ts";
import { isUniqueViolation, transact } from "../transaction.ts";
import { bumpChannelVersion } from "./channel-cache.ts";
import { assertSendable, urlOrigin, type ChannelInput } from "./channel-input.ts";
import { channelView, sealContext, type ChannelView } from "./channel-views.ts";

export type ChannelChanges = Partial<Omit<ChannelInput, "kind">>;

export async function updateChannel(deps: ServiceDeps, admin: OperatorPrincipal, channelId: string, changes: ChannelChanges): Promise<ChannelView> {
  const now = deps.now();
  try {
    return await transact(deps, async (tx) => {
      const before = await tx.notificationChannel.findFirst({ where: { id: channelId, workspaceId: admin.workspaceId } });
      if (!before) throw notFound("channel", channelId);
      if (changes.emails !== undefined) assertSendable(deps, before.kind, { emails: changes.emails, url: before.kind === "EMAIL" ? null : (changes.url ?? before.urlOrigin) });
      if (changes.url !== undefined) assertSendable(deps, before.kind, { url: changes.url });
      const updated = await tx.notificationChannel.update({
        where: { id: channelId },
        data: {
          ...(changes.name !== undefined ? { name: changes.name } : {}),
          ...(changes.emails !== undefined ? { emails: [...new Set(changes.emails.map((email) => email.toLowerCase()))] } : {}),
          ...(changes.url !== undefined ? { urlEncrypted: deps.channelSecrets.seal(changes.url, sealContext(channelId, "url")), urlOrigin: urlOrigin(changes.url) } : {}),
          ...(changes.digestThreshold !== undefined ? { digestThreshold: changes.digestThreshold } : {}),
          ...(changes.digestWindowSeconds !== undefined ? { digestWindowSeconds: changes.digestWindowSeconds } : {}),
          ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}),
        },
      });
      await bumpChannelVersion(tx, admin.workspaceId);
      await deps.audit.append(
        tx,
        admin.workspaceId,
        { actor: operatorActor(admin), action: "channel.updated", subjectType: "channel", subjectId: channelId, data: { before: channelView(before), after: channelView(updated) } },
        now,
      );
      return channelView(updated);
    });
  } catch (error) {
    if (isUniqueViolation(error) && changes.name) throw new DomainError("CONFLICT", `name: a channel named "${changes.name}" already exists in this workspace`, { field: "name" });
    throw error;
  }
}
