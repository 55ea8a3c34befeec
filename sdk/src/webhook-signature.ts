// The signature on decision webhooks, written once for both sides: the server
// signs with it and agents verify with it. The signing secret is derived from
// the agent key, so an agent verifies with nothing but its key, and the server
// stores the derived secret, never the key itself.
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

/** Verifies a decision webhook's `tollgate-signature` header with the agent key that began the request. */
export function verifyWebhook(body: string, signatureHeader: string | null | undefined, apiKey: string, nowMs = Date.now()): boolean {
  return verifyWebhookSignature(webhookSecretFor(apiKey), body, signatureHeader, nowMs);
}
