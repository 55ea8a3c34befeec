// Signed decision webhooks: the signature is the SDK's (agents verify with the
// same code the server signs with); the delivery schedule is the server's own.
export {
  DELIVERY_HEADER,
  SIGNATURE_HEADER,
  SIGNATURE_TOLERANCE_MS,
  signWebhook,
  verifyWebhookSignature,
  webhookSecretFor,
} from "../../sdk/src/webhook-signature.ts";

/** Retry delay after `attempts` failed attempts: doubling from 0.5 s, capped at 5 minutes. */
export function retryDelayMs(attempts: number): number {
  return Math.min(500 * 2 ** Math.max(attempts - 1, 0), 5 * 60_000);
}

export const MAX_DELIVERY_ATTEMPTS = 30;
