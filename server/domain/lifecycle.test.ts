import { describe, expect, it } from "vitest";
import {
  conflictingDecisionError,
  expiryEnding,
  isSameDecision,
  planRequestEnding,
  requestStatusFor,
  statusForDecision,
  validateDecision,
  type DecisionAction,
  type RequestEnding,
  type RunStatus,
} from "./lifecycle.ts";

describe("request status from pending approvals (invariant 1)", () => {
  it.each<[RunStatus, number, RunStatus]>([
    ["RUNNING", 0, "RUNNING"],
    ["RUNNING", 1, "PAUSED"],
    ["PAUSED", 2, "PAUSED"],
    ["PAUSED", 1, "PAUSED"],
    ["PAUSED", 0, "RUNNING"],
    ["COMPLETED", 1, "COMPLETED"],
    ["FAILED", 1, "FAILED"],
    ["CANCELED", 0, "CANCELED"],
  ])("request: %s with %i pending below becomes %s", (current, pending, expected) => {
    expect(requestStatusFor(current, pending)).toBe(expected);
  });
});

describe("request endings", () => {
  const table: [RunStatus, RequestEnding, RunStatus | "unchanged" | "CONFLICT" | "PRECONDITION_FAILED"][] = [
    ["RUNNING", "complete", "COMPLETED"],
    ["RUNNING", "fail", "FAILED"],
    ["RUNNING", "cancel", "CANCELED"],
    ["PAUSED", "complete", "PRECONDITION_FAILED"],
    ["PAUSED", "fail", "FAILED"],
    ["PAUSED", "cancel", "CANCELED"],
    ["COMPLETED", "complete", "unchanged"],
    ["COMPLETED", "fail", "CONFLICT"],
    ["COMPLETED", "cancel", "CONFLICT"],
    ["FAILED", "fail", "unchanged"],
    ["FAILED", "complete", "CONFLICT"],
    ["CANCELED", "cancel", "unchanged"],
    ["CANCELED", "complete", "CONFLICT"],
  ];
  it.each(table)("request: %s then %s gives %s", (status, ending, expected) => {
    const attempt = () => planRequestEnding({ requestId: "req_1", status, pendingApprovalIds: ["apr_9"] }, ending);
    if (expected === "CONFLICT" || expected === "PRECONDITION_FAILED") {
      expect(attempt).toThrow(expect.objectContaining({ code: expected }));
    } else {
      expect(attempt()).toBe(expected);
    }
  });

  it("request: completing a PAUSED request names the pending approval", () => {
    expect(() => planRequestEnding({ requestId: "req_1", status: "PAUSED", pendingApprovalIds: ["apr_9"] }, "complete")).toThrow(
      /waiting for approval apr_9/,
    );
  });

  it("request: completing a request paused by a child says so", () => {
    expect(() => planRequestEnding({ requestId: "req_1", status: "PAUSED", pendingApprovalIds: [] }, "complete")).toThrow(
      /a request it invoked is waiting/,
    );
  });
});

describe("decisions", () => {
  it.each<[DecisionAction, string]>([
    ["approve", "APPROVED"],
    ["edit", "APPROVED"],
    ["reject", "REJECTED"],
    ["respond", "REJECTED"],
  ])("decision: %s ends the approval %s", (action, status) => {
    expect(statusForDecision(action)).toBe(status);
  });

  it.each<[string, DecisionAction[], Parameters<typeof validateDecision>[2], RegExp | null]>([
    ["approve allowed", ["approve", "reject"], { action: "approve" }, null],
    ["edit not allowed", ["approve", "reject"], { action: "edit", args: { a: 1 } }, /allows approve, reject; "edit"/],
    ["edit without args", ["edit"], { action: "edit" }, /needs args/],
    ["args with approve", ["approve"], { action: "approve", args: { a: 1 } }, /only accepted with "edit"/],
    ["respond without message", ["respond"], { action: "respond", message: "  " }, /needs a message/],
    ["respond with message", ["respond"], { action: "respond", message: "use the sandbox" }, null],
    ["reject without message", ["reject"], { action: "reject" }, null],
  ])("decision: %s", (_name, allowed, decision, error) => {
    const attempt = () => validateDecision("apr_1", allowed, decision);
    if (error) expect(attempt).toThrow(error);
    else expect(attempt).not.toThrow();
  });

  const stored = { action: "edit" as const, args: { to: "a@b.c", n: [1, 2] }, decidedBy: "ops@example.com", decidedAt: new Date("2026-01-01T12:03:00Z") };

  it("decision: the same decision again is recognised, whatever the key order", () => {
    expect(isSameDecision(stored, { action: "edit", args: { n: [1, 2], to: "a@b.c" } })).toBe(true);
  });

  it.each([
    [{ action: "approve" as const }],
    [{ action: "edit" as const, args: { to: "x@y.z", n: [1, 2] } }],
    [{ action: "edit" as const, args: { to: "a@b.c", n: [2, 1] } }],
  ])("decision: a different decision is not the same (%j)", (incoming) => {
    expect(isSameDecision(stored, incoming)).toBe(false);
  });

  it("decision: the conflict message names who decided what and when", () => {
    const error = conflictingDecisionError("apr_123", "APPROVED", stored);
    expect(error.code).toBe("CONFLICT");
    expect(error.message).toBe(
      "approval apr_123 was already approved with edits by ops@example.com at 2026-01-01T12:03:00.000Z; a different decision is not allowed",
    );
  });

  it("timeout: expiry applies the configured default and says so", () => {
    expect(expiryEnding("reject")).toMatchObject({ status: "EXPIRED", action: "reject", decidedBy: "tollgate (timeout)" });
    expect(expiryEnding("approve")).toMatchObject({ status: "EXPIRED", action: "approve" });
    expect(expiryEnding("cancel")).toMatchObject({ status: "CANCELED", action: null });
  });
});
