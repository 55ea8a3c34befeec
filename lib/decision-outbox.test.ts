import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DecisionOutbox, type DecideInput, type DecideResult, type SendResult } from "./decision-outbox";

const ME = "ada@example.com";
const approve = (approvalId: string): DecideInput => ({ approvalId, action: "approve" });
const decided = (approvalId: string, decidedBy = ME): SendResult => ({
  ok: true,
  data: { approvalId, status: "APPROVED", decision: { action: "approve", decidedBy, decidedAt: "2026-11-27T12:00:00.000Z" } } as DecideResult,
});

describe("decision outbox", () => {
  let sent: DecideInput[];
  let answer: (input: DecideInput) => SendResult;
  let outbox: DecisionOutbox;
  beforeEach(() => {
    vi.useFakeTimers();
    sent = [];
    answer = (input) => decided(input.approvalId);
    outbox = new DecisionOutbox({ windowMs: 5_000, send: async (input) => (sent.push(input), answer(input)) });
  });
  afterEach(() => vi.useRealTimers());

  it("sends a decision once its window is over, not before", async () => {
    outbox.queue(approve("apr_1"), "send_email for A2", ME);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(sent).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent).toEqual([approve("apr_1")]);
    expect(outbox.get("apr_1")?.state).toBe("sent");
  });

  it("an undone decision is never sent", async () => {
    outbox.queue(approve("apr_1"), "send_email for A2", ME);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(outbox.undo("apr_1")).toBe(true);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sent).toEqual([]);
  });

  it("a second decision on an approval whose first waits is refused", async () => {
    expect(outbox.queue(approve("apr_1"), "x", ME)).toBe(true);
    expect(outbox.queue({ approvalId: "apr_1", action: "reject" }, "x", ME)).toBe(false);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(sent).toEqual([approve("apr_1")]);
  });

  it("a decision the network refused waits, is not lost, and goes again when asked", async () => {
    answer = () => ({ ok: false, network: true });
    outbox.queue(approve("apr_1"), "x", ME);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(outbox.get("apr_1")?.state).toBe("unsent");
    expect(outbox.hasUnsent()).toBe(true);
    answer = (input) => decided(input.approvalId);
    outbox.retryUnsent();
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toHaveLength(2);
    expect(outbox.get("apr_1")?.state).toBe("sent");
    expect(outbox.hasUnsent()).toBe(false);
  });

  it("closing the page sends what waits at once", async () => {
    outbox.queue(approve("apr_1"), "x", ME);
    outbox.flushOnExit();
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toEqual([approve("apr_1")]);
  });

  it("someone else's decision returned for ours is late, and says whose", async () => {
    answer = (input) => decided(input.approvalId, "bob@example.com");
    outbox.queue(approve("apr_1"), "x", ME);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(outbox.get("apr_1")).toMatchObject({ state: "late", late: { decidedBy: "bob@example.com", action: "approve" } });
  });
});
