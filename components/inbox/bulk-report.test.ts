import { describe, expect, it } from "vitest";
import type { ApprovalItem } from "@/lib/types";
import { bulkOutcomes, bulkSummary } from "./bulk-report";

const item = (approvalId: string, allow = ["approve", "reject"]) => ({ approvalId, tool: "send_email", agent: "mailer", allow }) as unknown as ApprovalItem;
const me = "me@example.com";

describe("bulk outcomes", () => {
  it("says what happened to each approval", () => {
    const targets = [item("apr_1"), item("apr_2"), item("apr_3", ["reject"]), item("apr_4"), item("apr_5"), item("apr_6")];
    const outcomes = bulkOutcomes(
      targets,
      "approve",
      [
        { ok: true, approvalId: "apr_1", status: "APPROVED", decision: { action: "approve", decidedBy: me, decidedAt: "t" } },
        { ok: false, approvalId: "apr_2", code: "CONFLICT", message: "already decided", details: { decidedBy: "ana@example.com" } },
        { ok: true, approvalId: "apr_4", status: "PENDING", approvals: [{ decidedBy: me, decidedAt: "t", action: "approve" }], required: 2 },
        { ok: false, approvalId: "apr_5", code: "NOT_FOUND", message: "approval apr_5 not found", details: null },
      ] as never,
      me,
    );
    expect(outcomes.map((outcome) => [outcome.approvalId, outcome.kind, outcome.text])).toEqual([
      ["apr_1", "done", "approved"],
      ["apr_2", "late", "already decided by ana@example.com"],
      ["apr_3", "skipped", "skipped: the agent does not allow approve"],
      ["apr_4", "voted", "your approval counted: 1 of 2 so far"],
      ["apr_5", "failed", "failed: approval apr_5 not found"],
      ["apr_6", "failed", "failed: no answer from the server"],
    ]);
    expect(bulkSummary(outcomes, "approve")).toBe("You approved 1 of 6. 1 counted toward a quorum. 1 already decided by someone else. 1 skipped. 2 failed.");
  });
});
