import { describe, expect, it } from "vitest";
import { retryDelayMs, signWebhook, verifyWebhookSignature, webhookSecretFor } from "./webhook.ts";

describe("webhook signatures", () => {
  const secret = webhookSecretFor("tgk_agent_key_for_tests");
  const body = JSON.stringify({ approvalId: "apr_1", status: "APPROVED" });
  const now = 1_800_000_000_000;

  it("webhook: a signature verifies with the secret derived from the agent key", () => {
    expect(verifyWebhookSignature(secret, body, signWebhook(secret, body, now), now + 1000)).toBe(true);
  });

  it("webhook: a changed body, another key or an old timestamp does not verify", () => {
    const header = signWebhook(secret, body, now);
    expect(verifyWebhookSignature(secret, body.replace("APPROVED", "REJECTED"), header, now)).toBe(false);
    expect(verifyWebhookSignature(webhookSecretFor("another key entirely"), body, header, now)).toBe(false);
    expect(verifyWebhookSignature(secret, body, header, now + 10 * 60_000)).toBe(false);
    expect(verifyWebhookSignature(secret, body, "garbage", now)).toBe(false);
  });

  it("webhook: retries back off by doubling up to five minutes", () => {
    expect([1, 2, 3, 4].map(retryDelayMs)).toEqual([500, 1000, 2000, 4000]);
    expect(retryDelayMs(40)).toBe(300_000);
  });
});
