// Notification channels (admins configure them; everyone may see them) and
// what was sent about an approval.
import { z } from "zod";
import { createChannel } from "../../services/notifications/create-channel.ts";
import { deleteChannel } from "../../services/notifications/delete-channel.ts";
import { listChannels, notificationsOf } from "../../services/notifications/list-notifications.ts";
import { updateChannel } from "../../services/notifications/update-channel.ts";
import { zId } from "../schemas.ts";
import { adminProcedure, operatorProcedure, router } from "../trpc.ts";

const zChannelName = z.string().trim().min(1, "must not be empty").max(100);
const zUrl = z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }).max(2000);
const zEmails = z.array(z.email("must be an email address").max(320)).max(50);
const zDigest = {
  digestThreshold: z.number().int().min(1).max(1000).optional(),
  digestWindowSeconds: z.number().int().min(1).max(24 * 3600).optional(),
};

const zChannelView = z.object({
  channelId: z.string(),
  name: z.string(),
  kind: z.enum(["EMAIL", "SLACK", "WEBHOOK"]),
  emails: z.array(z.string()),
  urlOrigin: z.string().nullable(),
  signed: z.boolean(),
  digestThreshold: z.number(),
  digestWindowSeconds: z.number(),
  enabled: z.boolean(),
  createdBy: z.string(),
  createdAt: z.string(),
  /** On the list: whether the latest announcements failed one after the other. */
  health: z.object({ failing: z.boolean(), failuresInARow: z.number(), lastError: z.string().nullable() }).optional(),
});

export const notificationRouter = router({
  channels: operatorProcedure
    .output(z.object({ channels: z.array(zChannelView), smtpConfigured: z.boolean() }))
    .query(({ ctx }) => listChannels(ctx.deps, ctx.operator.workspaceId)),

  /** A WEBHOOK channel's signing secret is in this answer only. */
  createChannel: adminProcedure
    .input(z.object({ name: zChannelName, kind: z.enum(["EMAIL", "SLACK", "WEBHOOK"]), emails: zEmails.optional(), url: zUrl.optional(), enabled: z.boolean().optional(), ...zDigest }))
    .output(z.object({ channel: zChannelView, signingSecret: z.string().nullable() }))
    .mutation(({ ctx, input }) => createChannel(ctx.deps, ctx.operator, input)),

  updateChannel: adminProcedure
    .input(z.object({ channelId: zId("chn"), name: zChannelName.optional(), emails: zEmails.optional(), url: zUrl.optional(), enabled: z.boolean().optional(), ...zDigest }))
    .output(zChannelView)
    .mutation(({ ctx, input }) => {
      const { channelId, ...changes } = input;
      return updateChannel(ctx.deps, ctx.operator, channelId, changes);
    }),

  deleteChannel: adminProcedure
    .input(z.object({ channelId: zId("chn") }))
    .output(z.object({ ok: z.literal(true) }))
    .mutation(({ ctx, input }) => deleteChannel(ctx.deps, ctx.operator, input.channelId)),

  /** Every announcement of an approval: where, to whom, when, and whether it arrived. */
  ofApproval: operatorProcedure
    .input(z.object({ approvalId: zId("apr") }))
    .query(async ({ ctx, input }) => ({ items: await notificationsOf(ctx.deps, ctx.operator.workspaceId, input.approvalId) })),
});
