import { describe, expect, it } from "vitest";
import type { ApprovalItem } from "@/lib/types";
import { belongsTo, patchPages, type ListPage } from "./list-patch";

const item = (approvalId: string, fields: Partial<ApprovalItem> = {}) =>
  ({ approvalId, status: "PENDING", sessionId: "ses_a", agent: "Billing-Agent", tool: "send_email", ...fields }) as ApprovalItem;
const page = (...items: ApprovalItem[]): ListPage => ({ items, nextCursor: null, total: items.length });
const ids = (pages: ListPage[] | null) => pages?.map((p) => p.items.map((i) => i.approvalId));

describe("belongsTo", () => {
  it("matches status, session and case-insensitive substrings of agent and tool", () => {
    expect(belongsTo(item("apr_1"), { status: "PENDING", agent: "billing", tool: "EMAIL" })).toBe(true);
    expect(belongsTo(item("apr_1", { status: "APPROVED" }), { status: "PENDING" })).toBe(false);
    expect(belongsTo(item("apr_1", { status: "APPROVED" }), { status: "DECIDED" })).toBe(true);
    expect(belongsTo(item("apr_1"), { status: "DECIDED" })).toBe(false);
    expect(belongsTo(item("apr_1"), { sessionId: "ses_b" })).toBe(false);
    expect(belongsTo(item("apr_1"), { tool: "refund" })).toBe(false);
  });

  it("keeps a request's batch to its own calls", () => {
    const batched = item("apr_1", { requestId: "req_a", batch: "turn-1" });
    expect(belongsTo(batched, { requestId: "req_a", batch: "turn-1" })).toBe(true);
    expect(belongsTo(batched, { requestId: "req_a", batch: "turn-2" })).toBe(false);
    expect(belongsTo(batched, { requestId: "req_b", batch: "turn-1" })).toBe(false);
  });

  it("leaves free-text and by-id lists to the server", () => {
    expect(belongsTo(item("apr_1"), { text: "delete" })).toBeNull();
    expect(belongsTo(item("apr_1"), { approvalIds: ["apr_1"] })).toBeNull();
    expect(belongsTo(item("apr_1"), { text: "  " })).toBe(true);
  });
});

describe("patchPages", () => {
  it("puts a new pending approval first and counts it", () => {
    const patched = patchPages([page(item("apr_1"))], { status: "PENDING" }, [item("apr_2")]);
    expect(ids(patched)).toEqual([["apr_2", "apr_1"]]);
    expect(patched![0]!.total).toBe(2);
  });

  it("takes a decided approval out of the pending list and into the history's first page", () => {
    const decided = item("apr_1", { status: "APPROVED" });
    expect(ids(patchPages([page(item("apr_1"), item("apr_2"))], { status: "PENDING" }, [decided]))).toEqual([["apr_2"]]);
    const history = patchPages([page(item("apr_9", { status: "REJECTED" })), page(item("apr_8", { status: "REJECTED" }))], { status: "DECIDED" }, [decided]);
    expect(ids(history)).toEqual([["apr_1", "apr_9"], ["apr_8"]]);
    expect(history!.map((p) => p.total)).toEqual([2, 2]); // each page counted 1 before
  });

  it("replaces an approval where it is listed, on any page", () => {
    const voted = item("apr_8", { status: "REJECTED", tool: "refund" });
    const patched = patchPages([page(item("apr_9", { status: "REJECTED" })), page(item("apr_8", { status: "REJECTED" }))], { status: "DECIDED" }, [voted]);
    expect(ids(patched)).toEqual([["apr_9"], ["apr_8"]]);
    expect(patched![1]!.items[0]!.tool).toBe("refund");
  });

  it("ignores an approval of another session, and asks for a refetch of a search", () => {
    expect(ids(patchPages([page(item("apr_1"))], { sessionId: "ses_a" }, [item("apr_2", { sessionId: "ses_b" })]))).toEqual([["apr_1"]]);
    expect(patchPages([page(item("apr_1"))], { text: "invoice" }, [item("apr_2")])).toBeNull();
  });
});
