import { describe, expect, it } from "vitest";
import { assertLockOrder } from "./lock-order.ts";

describe("lock order of an approval's opening", () => {
  it.each([
    { what: "a pending approval, no audit entry: passes", status: "PENDING", audit: null, refused: false },
    { what: "a rule's approval with its audit entry: passes", status: "APPROVED", audit: { action: "approval.decided" }, refused: false },
    { what: "a rule's rejection with its audit entry: passes", status: "REJECTED", audit: { action: "approval.decided" }, refused: false },
    { what: "a pending approval with an audit entry: refused", status: "PENDING", audit: { action: "approval.decided" }, refused: true },
  ])("lock order: $what", ({ status, audit, refused }) => {
    const check = () => assertLockOrder({ approval: { status }, audit });
    if (refused) expect(check).toThrow(/lock order step 3 after step 4/);
    else expect(check).not.toThrow();
  });
});
