// Sends the announcements approval.request, escalations and reminders wrote
// (Notification rows), per channel: by email, to a Slack-compatible incoming
// webhook, or as a signed JSON webhook. Rows survive restarts; claiming a row
// is a conditional write with a lease, so two nodes never send the same
// attempt. A channel sends at most `digestThreshold` messages per window; the
// approvals beyond that wait for the window and go out together as one digest.
import type { ChannelKind, Notification, NotificationChannel } from "../db/generated/client.ts";
import { groupBy } from "../domain/group-by.ts";
import { newId } from "../domain/ids.ts";
import {
  describeAsk,
  emailMessage,
  planSend,
  slackMessage,
  webhookPayload,
  type Announced,
  type DigestBudget,
} from "../domain/notification-message.ts";
import { recipientsOf, type Ask } from "../domain/routing.ts";
import { DELIVERY_HEADER, MAX_DELIVERY_ATTEMPTS, retryDelayMs, SIGNATURE_HEADER, signWebhook } from "../domain/webhook.ts";
import { log } from "../log.ts";
import type { OutboundResult } from "../net/outbound.ts";
import type { ServiceDeps } from "../services/deps.ts";
import { SMTP_DEFAULT_CHANNEL } from "../services/notifications/announce.ts";
import { sealContext } from "../services/notifications/channel-views.ts";
import { WorkLoop } from "./work-loop.ts";

const SEND_TIMEOUT_MS = 10_000;
// A claimed row is taken up by any node after this lease if its sender died.
const LEASE_MS = 30_000;
const MAX_SLEEP_MS = 2_000;
const ROUND_SIZE = 500;
/** The approvers' email (TOLLGATE_SMTP_URL, no channel configured) digests like a channel with the defaults. */
const DEFAULT_BUDGET: DigestBudget = { threshold: 5, windowMs: 60_000 };

type Row = Notification & {
  approval: {
    id: string;
    workspaceId: string;
    status: string;
    tool: string;
    reason: string | null;
    proposedArgs: unknown;
    expiresAt: Date | null;
    askedRole: string | null;
    askedOperators: string[];
    askedGroup: string | null;
    requiredRole: string;
    task: { agent: string };
  };
  channel: NotificationChannel | null;
};

/** One message to send: the rows it announces, and where it goes. */
interface Outgoing {
  rows: Row[];
  recipients: string[];
}

export class NotificationDeliverer {
  private readonly loop = new WorkLoop("notification delivery", () => this.round());
  private readonly unsubscribe: () => void;

  constructor(private readonly deps: ServiceDeps) {
    this.unsubscribe = deps.bus.on("notification:queued", () => this.loop.wake());
  }

  start(): void {
    this.loop.wake();
  }

  async stop(): Promise<void> {
    this.unsubscribe();
    await this.loop.stop();
  }

  /** One round: everything due, channel by channel. Returns how long to sleep. */
  async round(): Promise<number> {
    const now = this.deps.now();
    const due = (await this.deps.prisma.notification.findMany({
      where: { status: "PENDING", nextAttemptAt: { lte: now } },
      orderBy: [{ nextAttemptAt: "asc" }, { id: "asc" }],
      take: ROUND_SIZE,
      include: {
        channel: true,
        approval: {
          select: {
            id: true,
            workspaceId: true,
            status: true,
            tool: true,
            reason: true,
            proposedArgs: true,
            expiresAt: true,
            askedRole: true,
            askedOperators: true,
            askedGroup: true,
            requiredRole: true,
            task: { select: { agent: true } },
          },
        },
      },
    })) as Row[];
    const byChannel = groupBy(due, (row) => row.channelKey);
    await Promise.all([...byChannel.values()].map((rows) => this.deliverChannel(rows, now)));
    return this.nextDueInMs();
  }

  private async deliverChannel(rows: Row[], now: Date): Promise<void> {
    const channel = rows[0]!.channel;
    if (rows[0]!.channelKey !== SMTP_DEFAULT_CHANNEL && (!channel || !channel.enabled)) {
      await this.drop(rows, channel ? "the channel was turned off before this was sent" : "the channel was deleted before this was sent");
      return;
    }
    // An approval decided before its announcement went out needs no announcement.
    const decided = rows.filter((row) => row.approval.status !== "PENDING");
    if (decided.length) await this.drop(decided, "not sent: the approval was decided first");
    const waiting = rows.filter((row) => row.approval.status === "PENDING");
    if (waiting.length === 0) return;

    const budget = channel ? { threshold: channel.digestThreshold, windowMs: channel.digestWindowSeconds * 1000 } : DEFAULT_BUDGET;
    const requested = waiting.filter((row) => row.reason === "REQUESTED");
    // Escalations and reminders are each worth their own message.
    const outgoing: Array<{ rows: Row[]; digest: boolean }> = waiting.filter((row) => row.reason !== "REQUESTED").map((row) => ({ rows: [row], digest: false }));
    if (requested.length) {
      const plan = planSend(requested.length, await this.sentInWindow(rows[0]!.channelKey, budget, now), budget, now);
      if (plan.kind === "hold") {
        await this.hold(requested, plan.until);
      } else if (plan.kind === "each") {
        outgoing.push(...requested.map((row) => ({ rows: [row], digest: false })));
      } else {
        outgoing.push({ rows: requested, digest: true });
      }
    }
    for (const batch of outgoing) {
      const claimed = await this.claim(batch.rows, now);
      if (claimed.length === 0) continue;
      const messages = await this.address(claimed, channel);
      await Promise.all(messages.map((message) => this.send(message, channel, batch.digest)));
    }
  }

  /** When this channel's messages of the window went out (a digest counts once). */
  private async sentInWindow(channelKey: string, budget: DigestBudget, now: Date): Promise<Date[]> {
    const sent = await this.deps.prisma.notification.findMany({
      where: { channelKey, status: "DELIVERED", deliveredAt: { gt: new Date(now.getTime() - budget.windowMs) } },
      distinct: ["messageId"],
      select: { deliveredAt: true },
    });
    return sent.map((row) => row.deliveredAt!);
  }

  /** Takes the rows for this attempt; a row another node took (or that changed) is left to it. */
  private async claim(rows: Row[], now: Date): Promise<Row[]> {
    const claimed: Row[] = [];
    for (const row of rows) {
      const taken = await this.deps.prisma.notification.updateMany({
        where: { id: row.id, status: "PENDING", nextAttemptAt: row.nextAttemptAt },
        data: { nextAttemptAt: new Date(now.getTime() + LEASE_MS), attempts: { increment: 1 } },
      });
      if (taken.count === 1) claimed.push({ ...row, attempts: row.attempts + 1 });
    }
    return claimed;
  }

  /**
   * Who each message goes to. An email channel with fixed addresses sends
   * there; otherwise to the operators each approval asks, one message per
   * set of recipients. Other channels post everything to their URL.
   */
  private async address(rows: Row[], channel: NotificationChannel | null): Promise<Outgoing[]> {
    const kind: ChannelKind = channel?.kind ?? "EMAIL";
    if (kind !== "EMAIL") return [{ rows, recipients: channel?.urlOrigin ? [channel.urlOrigin] : [] }];
    if (channel && channel.emails.length > 0) return [{ rows, recipients: channel.emails }];
    const workspaceId = rows[0]!.workspaceId;
    const operators = await this.deps.prisma.operator.findMany({ where: { workspaceId }, select: { email: true, role: true, groups: true, disabledAt: true } });
    const contacts = operators.map((operator) => ({ email: operator.email, role: operator.role, groups: operator.groups, disabled: operator.disabledAt !== null }));
    const byRecipients = groupBy(rows, (row) => recipientsOf(askOfRow(row), contacts).join(","));
    return [...byRecipients.entries()].map(([key, group]) => ({ rows: group, recipients: key ? key.split(",") : [] }));
  }

  private async send(message: Outgoing, channel: NotificationChannel | null, digest: boolean): Promise<void> {
    const messageId = newId("msg");
    const items = message.rows.map((row) => this.announced(row));
    let sent: OutboundResult;
    if (message.recipients.length === 0) {
      sent = { ok: false, error: "nobody to email: no active operator matches who the approval asks", refused: true };
    } else if (!channel || channel.kind === "EMAIL") {
      sent = await this.sendEmail(message.recipients, items);
    } else {
      sent = await this.post(channel, messageId, message.rows, items);
    }
    const now = this.deps.now();
    if (sent.ok) {
      await this.deps.prisma.notification.updateMany({
        where: { id: { in: message.rows.map((row) => row.id) } },
        data: { status: "DELIVERED", deliveredAt: now, lastError: null, recipients: message.recipients, messageId, digestSize: digest ? message.rows.length : null },
      });
      return;
    }
    for (const row of message.rows) {
      // A refused destination stays refused: retrying would only knock again.
      const giveUp = row.attempts >= MAX_DELIVERY_ATTEMPTS || sent.refused;
      await this.deps.prisma.notification.update({
        where: { id: row.id },
        data: {
          status: giveUp ? "FAILED" : "PENDING",
          lastError: sent.error.slice(0, 1000),
          recipients: message.recipients,
          nextAttemptAt: new Date(now.getTime() + retryDelayMs(row.attempts)),
        },
      });
      if (giveUp) log.warn(`giving up on notification ${row.id} (${row.channelKey}) after ${row.attempts} attempts: ${sent.error}`);
    }
  }

  private async sendEmail(to: string[], items: Announced[]): Promise<OutboundResult> {
    if (!this.deps.mailer) return { ok: false, error: "TOLLGATE_SMTP_URL is not set: this server cannot send email", refused: true };
    try {
      await this.deps.mailer.send({ to, ...emailMessage(items) });
      return { ok: true, status: 250 };
    } catch (error) {
      const code = (error as { responseCode?: number }).responseCode;
      // A permanent SMTP refusal (5xx) is not retried.
      return { ok: false, error: `SMTP: ${(error as Error).message}`, refused: code !== undefined && code >= 500 };
    }
  }

  /** Slack gets Block Kit; a WEBHOOK channel gets the data, signed with its secret. */
  private async post(channel: NotificationChannel, messageId: string, rows: Row[], items: Announced[]): Promise<OutboundResult> {
    const url = channel.urlEncrypted ? this.deps.channelSecrets.open(channel.urlEncrypted, sealContext(channel.id, "url")) : undefined;
    if (!url) return { ok: false, error: "the channel's URL cannot be read with this server's TOLLGATE_SECRET", refused: true };
    const body = JSON.stringify(channel.kind === "SLACK" ? slackMessage(items) : webhookPayload(items, rows.map((row) => row.id)));
    const headers: Record<string, string> = { "content-type": "application/json", [DELIVERY_HEADER]: messageId };
    if (channel.secretEncrypted) {
      const secret = this.deps.channelSecrets.open(channel.secretEncrypted, sealContext(channel.id, "secret"));
      if (!secret) return { ok: false, error: "the channel's signing secret cannot be read with this server's TOLLGATE_SECRET", refused: true };
      headers[SIGNATURE_HEADER] = signWebhook(secret, body, Date.now());
    }
    return this.deps.outbound.post(url, { headers, body, signal: AbortSignal.any([AbortSignal.timeout(SEND_TIMEOUT_MS), this.deps.shutdown]) });
  }

  private announced(row: Row): Announced {
    const { approval } = row;
    return {
      approvalId: approval.id,
      reason: row.reason,
      tool: approval.tool,
      agent: approval.task.agent,
      summary: approval.reason,
      args: approval.proposedArgs,
      expiresAt: approval.expiresAt,
      askedOf: describeAsk(askOfRow(row)),
      link: `${this.deps.publicUrl()}/approvals/${approval.id}`,
    };
  }

  private async hold(rows: Row[], until: Date): Promise<void> {
    await this.deps.prisma.notification.updateMany({ where: { id: { in: rows.map((row) => row.id) }, status: "PENDING" }, data: { nextAttemptAt: until } });
  }

  private async drop(rows: Row[], why: string): Promise<void> {
    await this.deps.prisma.notification.updateMany({ where: { id: { in: rows.map((row) => row.id) }, status: "PENDING" }, data: { status: "FAILED", lastError: why } });
  }

  /** Sleep until the next row falls due, but re-check at least every MAX_SLEEP_MS. */
  private async nextDueInMs(): Promise<number> {
    const next = await this.deps.prisma.notification.findFirst({ where: { status: "PENDING" }, orderBy: { nextAttemptAt: "asc" }, select: { nextAttemptAt: true } });
    const wait = next ? next.nextAttemptAt.getTime() - this.deps.now().getTime() : MAX_SLEEP_MS;
    return Math.min(Math.max(wait, 0), MAX_SLEEP_MS);
  }
}

function askOfRow(row: Row): Ask {
  const { approval } = row;
  const role = (approval.askedRole ?? approval.requiredRole) === "ADMIN" ? "ADMIN" : "OPERATOR";
  return { role, operators: approval.askedOperators, group: approval.askedGroup };
}
