import { describe, expect, it } from "vitest";
import type { Approval } from "../../db/generated/client.ts";
import type { GateFacts } from "./gate-facts-cache.ts";
import { OpenedApprovals } from "./opened-approvals.ts";

const approval = (id: string): Approval => ({ id, workspaceId: "ws_1", requestId: "req_1", status: "PENDING", requiredApprovals: 1 }) as Approval;

const facts = { id: "req_1", agent: "billing-agent", resumeUrl: null } as GateFacts;

describe("the approvals a node opened", () => {
  it("gives each up once, whether it is the last one held or one of several, and keeps working after", () => {
    const opened = new OpenedApprovals();
    opened.opened(approval("apr_1"), 100, facts);
    expect(opened.take("ws_1", "apr_1")?.approval).toMatchObject({ id: "apr_1", task: { agent: "billing-agent" } });
    expect(opened.take("ws_1", "apr_1")).toBeUndefined();

    opened.opened(approval("apr_2"), 100, facts);
    opened.opened(approval("apr_3"), 100, facts);
    expect(opened.take("ws_1", "apr_3")?.approval.id).toBe("apr_3");
    expect(opened.take("ws_1", "apr_3")).toBeUndefined();
    expect(opened.take("ws_1", "apr_2")?.approval.id).toBe("apr_2");
    expect(opened.take("ws_1", "apr_2")).toBeUndefined();

    opened.opened(approval("apr_4"), 100, facts);
    expect(opened.take("ws_2", "apr_4")).toBeUndefined();
    expect(opened.take("ws_1", "apr_4")?.resumeUrl).toBeNull();
  });

  it("keeps only what one approver decides, on a request whose webhook address the node knows", () => {
    const opened = new OpenedApprovals();
    opened.opened({ ...approval("apr_1"), requiredApprovals: 2 }, 100, facts);
    opened.opened(approval("apr_2"), 100, undefined);
    opened.opened(approval("apr_3"), 100, { ...facts, id: "req_other" });
    for (const id of ["apr_1", "apr_2", "apr_3"]) expect(opened.take("ws_1", id)).toBeUndefined();
  });
});
