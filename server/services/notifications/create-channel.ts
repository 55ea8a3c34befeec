// An admin adds a notification channel. A WEBHOOK channel gets a signing
// secret, returned this once; its URL and secret are stored sealed.
import { randomBytes } from "node:crypto";
import { DomainError } from "../../domain/errors.ts";
import { newId } from "../../domain/ids.ts";
import type { OperatorPrincipal } from "../../domain/principal.ts";
import type { ServiceDeps } from "../deps.ts";
import { operatorActor } from "../policies/create-policy.ts";
import { isUniqueViolation, transact } from "../transaction.ts";
import { bumpChannelVersion } from "./channel-cache.ts";
import { assertSendable, urlOrigin, type ChannelInput } from "./channel-input.ts";
import { channelView, sealContext, type ChannelView } from "./channel-views.ts";

export async function createChannel(deps: ServiceDeps, admin: OperatorPrincipal, input: ChannelInput): Promise<{ channel: ChannelView; signingSecret: string | null }> {
  assertSendable(deps, input.kind, input);
  const id = newId("chn");
  const now = deps.now();
  const signingSecret = input.kind === "WEBHOOK" ? `whsec_${randomBytes(24).toString("base64url")}` : null;
  try {
    const row = await transact(deps, async (tx) => {
      const created = await tx.notificationChannel.create({
        data: {
          id,
          workspaceId: admin.workspaceId,
          name: input.name,
          kind: input.kind,
          emails: input.kind === "EMAIL" ? [...new Set((input.emails ?? []).map((email) => email.toLowerCase()))] : [],
          urlEncrypted: input.url ? deps.channelSecrets.seal(input.url, sealContext(id, "url")) : null,
          urlOrigin: input.url ? urlOrigin(input.url) : null,
          secretEncrypted: signingSecret ? deps.channelSecrets.seal(signingSecret, sealContext(id, "secret")) : null,
          digestThreshold: input.digestThreshold ?? 5,
          digestWindowSeconds: input.digestWindowSeconds ?? 60,
          enabled: input.enabled ?? true,
          createdBy: admin.email,
          createdAt: now,
        },
      });
      await bumpChannelVersion(tx, admin.workspaceId);
      await deps.audit.append(tx, admin.workspaceId, { actor: operatorActor(admin), action: "channel.created", subjectType: "channel", subjectId: id, data: channelView(created) }, now);
      return created;
    });
    return { channel: channelView(row), signingSecret };
  } catch (error) {
    if (isUniqueViolation(error)) throw new DomainError("CONFLICT", `name: a channel named "${input.name}" already exists in this workspace`, { field: "name" });
    throw error;
  }
}
