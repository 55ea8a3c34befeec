// POSTs decisions to the resumeUrl of their request, signed with the agent
// key's webhook secret, retrying with backoff until a 2xx answer. Deliveries
// are rows in the database, so a restart resumes them (invariant 7); claiming
// a row is a conditional write, so two nodes do not send the same attempt.
import { openWebhookSecret } from "../services/agent-keys/agent-key-rows.ts";
import { DELIVERY_HEADER, MAX_DELIVERY_ATTEMPTS, retryDelayMs, SIGNATURE_HEADER, signWebhook } from "../domain/webhook.ts";
import { approvalResult } from "../services/approvals/approval-views.ts";
import type { ServiceDeps } from "../services/deps.ts";
import { log } from "../log.ts";
import { WorkLoop } from "./work-loop.ts";
import type { OutboundResult } from "../net/outbound.ts";

const SEND_TIMEOUT_MS = 10_000;
// A claimed delivery is retried by any node after this lease if its sender died.
const LEASE_MS = SEND_TIMEOUT_MS + 5_000;
const MAX_SLEEP_MS = 2_000;

export class WebhookDeliverer {
  private readonly loop = new WorkLoop("webhook delivery", async () => {
    await this.runOnce();
    return this.nextDueInMs();
  });
  private readonly unsubscribe: () => void;

  constructor(private readonly deps: ServiceDeps) {
    // Only decisions that queued a delivery wake it: most requests have no resumeUrl.
    this.unsubscribe = deps.bus.on("webhook:queued", () => this.loop.wake());
  }

  start(): void {
    this.loop.wake();
  }

  private async runOnce(): Promise<void> {
    const now = this.deps.now();
    const due = await this.deps.prisma.decisionDelivery.findMany({
      where: { status: "PENDING", nextAttemptAt: { lte: now } },
      orderBy: { nextAttemptAt: "asc" },
      take: 20,
      include: { approval: { include: { request: { include: { agentKey: { select: { id: true, webhookSecret: true } } } } } } },
    });
    await Promise.all(
      due.map(async (delivery) => {
        const claimed = await this.deps.prisma.decisionDelivery.updateMany({
          where: { id: delivery.id, status: "PENDING", nextAttemptAt: delivery.nextAttemptAt },
          data: { nextAttemptAt: new Date(now.getTime() + LEASE_MS), attempts: { increment: 1 } },
        });
        if (claimed.count === 0) return;
        const attempts = delivery.attempts + 1;
        const agentKey = delivery.approval.request.agentKey;
        const secret = agentKey ? openWebhookSecret(this.deps, agentKey.id, agentKey.webhookSecret) : undefined;
        const body = JSON.stringify({
          type: "approval.decided",
          deliveryId: delivery.id,
          requestId: delivery.approval.requestId,
          // A durable run's id, so the deployment can start the run's continuation itself.
          ...(delivery.approval.request.runId ? { runId: delivery.approval.request.runId } : {}),
          ...approvalResult(delivery.approval),
        });
        const sent = secret ? await this.send(delivery.url, delivery.id, secret, body, delivery.approval.request.traceparent) : { ok: false as const, error: agentKey ? "the agent key's webhook secret cannot be opened with this server's TOLLGATE_SECRET" : "the request has no agent key to sign with", refused: true };
        if (sent.ok) {
          await this.deps.prisma.decisionDelivery.update({
            where: { id: delivery.id },
            data: { status: "DELIVERED", deliveredAt: this.deps.now(), lastError: null },
          });
          return;
        }
        const error = sent.error;
        // A refused destination stays refused: retrying would only knock again.
        const giveUp = attempts >= MAX_DELIVERY_ATTEMPTS || sent.refused;
        await this.deps.prisma.decisionDelivery.update({
          where: { id: delivery.id },
          data: {
            status: giveUp ? "FAILED" : "PENDING",
            lastError: error.slice(0, 1000),
            nextAttemptAt: new Date(this.deps.now().getTime() + retryDelayMs(attempts)),
          },
        });
        if (giveUp) log.warn(`giving up on webhook ${delivery.id} to ${delivery.url} after ${attempts} attempts: ${error}`);
      }),
    );
  }

  /** Sleep until the next retry falls due, but re-check at least every MAX_SLEEP_MS. */
  private async nextDueInMs(): Promise<number> {
    const next = await this.deps.prisma.decisionDelivery.findFirst({
      where: { status: "PENDING" },
      orderBy: { nextAttemptAt: "asc" },
      select: { nextAttemptAt: true },
    });
    const wait = next ? next.nextAttemptAt.getTime() - this.deps.now().getTime() : MAX_SLEEP_MS;
    return Math.min(Math.max(wait, 0), MAX_SLEEP_MS);
  }

  /** Sends one attempt through the outbound guard (server/net/outbound.ts). */
  private send(url: string, deliveryId: string, secret: string, body: string, traceparent: string | null): Promise<OutboundResult> {
    return this.deps.outbound.post(url, {
      headers: {
        "content-type": "application/json",
        // The agent's trace continues into its resume endpoint.
        ...(traceparent ? { traceparent } : {}),
        [SIGNATURE_HEADER]: signWebhook(secret, body, Date.now()),
        [DELIVERY_HEADER]: deliveryId,
      },
      body,
      signal: AbortSignal.any([AbortSignal.timeout(SEND_TIMEOUT_MS), this.deps.shutdown]),
    });
  }

  async stop(): Promise<void> {
    this.unsubscribe();
    await this.loop.stop();
  }
}
