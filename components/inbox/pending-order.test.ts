import { describe, expect, it } from "vitest";
import type { ApprovalItem } from "@/lib/types";
import { orderPending } from "./pending-order";

const item = (approvalId: string, createdAt: string, expiresAt: string | null, askedOfYou = false) => ({ approvalId, createdAt, expiresAt, askedOfYou }) as ApprovalItem;

describe("pending order", () => {
  const items = [
    item("new-no-expiry", "2026-11-23T10:05:00Z", null),
    item("old-no-expiry", "2026-11-23T10:00:00Z", null),
    item("expires-late", "2026-11-23T10:03:00Z", "2026-11-23T12:00:00Z"),
    item("expires-soon", "2026-11-23T10:04:00Z", "2026-11-23T10:30:00Z"),
    item("asked-of-you", "2026-11-23T10:01:00Z", null, true),
  ];

  it("most urgent: asked of you, then soonest expiry, then longest waiting", () => {
    expect(orderPending(items, "urgent").map((entry) => entry.approvalId)).toEqual(["asked-of-you", "expires-soon", "expires-late", "old-no-expiry", "new-no-expiry"]);
  });

  it("newest: asked of you, then by arrival", () => {
    expect(orderPending(items, "newest").map((entry) => entry.approvalId)).toEqual(["asked-of-you", "new-no-expiry", "expires-soon", "expires-late", "old-no-expiry"]);
  });
});
