import { describe, expect, it } from "vitest";
import { describeAsk, emailMessage, keyArguments, planSend, slackMessage, webhookPayload, type Announced } from "./notification-message.ts";

const item = (overrides: Partial<Announced> = {}): Announced => ({
  approvalId: "apr_1",
  reason: "REQUESTED",
  tool: "send_email",
  agent: "A2",
  summary: "reply to <customer> & close",
  args: { to: "c@example.com", subject: "Your refund", body: "x".repeat(500) },
  expiresAt: new Date("2026-11-23T12:15:00Z"),
  askedOf: "operators",
  link: "https://tollgate.example.com/approvals/apr_1",
  ...overrides,
});

describe("announcement messages", () => {
  it("email: one approval says what is asked, who is asked, the expiry and the link, in text and HTML", () => {
    const message = emailMessage([item()]);
    expect(message.subject).toBe("Approval needed: send_email by A2 (expires 2026-11-23 12:15 UTC)");
    for (const part of [message.text, message.html]) {
      expect(part).toContain("https://tollgate.example.com/approvals/apr_1");
      expect(part).toContain("c@example.com");
      expect(part).toContain("2026-11-23 12:15 UTC");
    }
    expect(message.text).toContain("Why: reply to <customer> & close");
    // In HTML, what the agent wrote is text, never markup.
    expect(message.html).toContain("reply to &lt;customer&gt; &amp; close");
    expect(message.html).not.toContain("<customer>");
  });

  it("email: long values are cut short and many arguments summarised", () => {
    const shown = keyArguments({ ...Object.fromEntries(Array.from({ length: 12 }, (_, index) => [`k${index}`, index])), k0: "y".repeat(300) });
    expect(shown).toHaveLength(9);
    expect(shown[0]![1]).toHaveLength(200);
    expect(shown.at(-1)).toEqual(["…", "4 more in the console"]);
    expect(keyArguments(["a", 1])).toEqual([["arguments", '["a",1]']]);
  });

  it("digest: several approvals in one email, each with its link", () => {
    const message = emailMessage([item(), item({ approvalId: "apr_2", tool: "refund", link: "https://t/approvals/apr_2", reason: "ESCALATED" })]);
    expect(message.subject).toBe("2 approvals need a decision");
    expect(message.text).toContain("https://t/approvals/apr_2");
    expect(message.text).toContain("Escalated: approval still needed: refund by A2");
  });

  it("slack: Block Kit with a button to the approval, Slack's markup characters escaped", () => {
    const message = slackMessage([item()]);
    expect(message.text).toBe("Approval needed: send_email by A2");
    const json = JSON.stringify(message.blocks);
    expect(json).toContain('"url":"https://tollgate.example.com/approvals/apr_1"');
    expect(json).toContain("reply to &lt;customer&gt; &amp; close");
  });

  it("webhook: the same content as data", () => {
    const payload = webhookPayload([item()], ["ntf_1"]);
    expect(payload).toMatchObject({ type: "approval.requested", notificationIds: ["ntf_1"], approvals: [{ approvalId: "apr_1", reason: "requested", expiresAt: "2026-11-23T12:15:00.000Z" }] });
    expect(webhookPayload([item(), item()], ["ntf_1", "ntf_2"]).type).toBe("approval.digest");
  });

  it("ask in words: names and groups, else the role", () => {
    expect(describeAsk({ role: "OPERATOR", operators: [], group: null })).toBe("operators");
    expect(describeAsk({ role: "ADMIN", operators: [], group: null })).toBe("admins");
    expect(describeAsk({ role: "ADMIN", operators: ["ada@example.com"], group: "finance" })).toBe("ada@example.com, group finance");
  });
});

describe("digest budget", () => {
  const now = new Date("2026-11-23T12:00:00Z");
  const budget = { threshold: 3, windowMs: 60_000 };
  const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);

  it.each([
    ["within the budget, one message each", 2, [], { kind: "each" }],
    ["exactly the budget, one message each", 3, [], { kind: "each" }],
    ["more than the budget left: one digest", 2, [ago(10), ago(5)], { kind: "digest" }],
    ["a burst larger than the whole budget: one digest", 200, [], { kind: "digest" }],
    ["budget spent: wait until the oldest message leaves the window", 4, [ago(50), ago(20), ago(10)], { kind: "hold", until: ago(-10) }],
    ["messages older than the window do not count", 3, [ago(61), ago(90)], { kind: "each" }],
  ] as const)("%s", (_case, due, sent, expected) => {
    expect(planSend(due, [...sent], budget, now)).toEqual(expected);
  });
});
