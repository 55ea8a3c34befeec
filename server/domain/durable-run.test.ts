import { describe, expect, it } from "vitest";
import { claimantOf, heldByOther } from "./durable-run.ts";

const now = new Date("2026-01-01T12:00:00Z");
const later = new Date("2026-01-01T12:00:30Z");
const earlier = new Date("2026-01-01T11:59:30Z");

describe("durable run lease", () => {
  it.each([
    ["nobody holds it", { leaseHolder: null, leaseExpiresAt: null }, false],
    ["this process holds it", { leaseHolder: "me", leaseExpiresAt: later }, false],
    ["another process holds it", { leaseHolder: "other", leaseExpiresAt: later }, true],
    ["another process's lease lapsed", { leaseHolder: "other", leaseExpiresAt: earlier }, false],
    ["another process's lease lapses now", { leaseHolder: "other", leaseExpiresAt: now }, false],
  ])("durable run: %s", (_name, lease, expected) => {
    expect(heldByOther(lease, "me", now)).toBe(expected);
  });

  it.each([
    ["the dead process it replaces holds it", { leaseHolder: "dead", leaseExpiresAt: later }, false],
    ["a process it does not replace holds it", { leaseHolder: "other", leaseExpiresAt: later }, true],
  ])("durable run, started in place of a dead process: %s", (_name, lease, expected) => {
    expect(heldByOther(lease, "me", now, "dead")).toBe(expected);
  });

  it("durable run: the claimant is read off the SDK's claim key, and only from a key of that approval", () => {
    expect(claimantOf("replica-1:apr_1", "apr_1")).toBe("replica-1");
    expect(claimantOf("a:b:apr_1", "apr_1")).toBe("a:b");
    expect(claimantOf("replica-1:apr_2", "apr_1")).toBe(null);
  });
});
