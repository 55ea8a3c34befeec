// Signed decision webhooks. The signing secret is derived from the agent key,
// so an agent can verify with nothing but its key, and Tollgate stores the
// derived secret, never the key itself.
import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "tollgate-signature";
export const DELIVERY_HEADER = "tollgate-delivery";
/** Signatures older than this are refused by verifiers (replay protection). */
export const SIGNATURE_TOLERANCE_MS = 5 * 60_000;

export function webhookSecretFor(agentKey: string): string {
  return createHmac("sha256", agentKey).update("tollgate-webhook-v1").digest("hex");
}

/** `t=<unix ms>,v1=<hex HMAC-SHA256 of "<t>.<body>">` */
export function signWebhook(secret: string, body: string, timestampMs: number): string {
  const mac = createHmac("sha256", secret).update(`${timestampMs}.${body}`).digest("hex");
  return `t=${timestampMs},v1=${mac}`;
}

export function verifyWebhookSignature(secret: string, body: string, header: string | null | undefined, nowMs: number): boolean {
  if (!header) return false;
  const parts = Object.fromEntries(header.split(",").map((part) => part.split("=", 2) as [string, string]));
  const timestamp = Number(parts.t);
  if (!Number.isFinite(timestamp) || Math.abs(nowMs - timestamp) > SIGNATURE_TOLERANCE_MS || !parts.v1) return false;
  const expected = Buffer.from(signWebhook(secret, body, timestamp).split("v1=")[1]!, "hex");
  const given = Buffer.from(parts.v1, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Retry delay after `attempts` failed attempts: doubling from 0.5 s, capped at 5 minutes. */
export function retryDelayMs(attempts: number): number {
  return Math.min(500 * 2 ** Math.max(attempts - 1, 0), 5 * 60_000);
}

export const MAX_DELIVERY_ATTEMPTS = 30;
