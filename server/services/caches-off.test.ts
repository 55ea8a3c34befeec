import { describe, expect, it } from "vitest";
import { HOT_PATH_CACHES } from "./cache-names.ts";
import { createServiceDeps } from "./deps.ts";
import type { ServiceDeps } from "./deps.ts";
import type { GateFacts } from "./approvals/gate-facts-cache.ts";
import type { Approval } from "../db/generated/client.ts";
import { EventBus } from "../events/bus.ts";

const database = { prisma: {} as never, sql: {} as never };
const now = new Date("2026-01-01T00:00:00Z");
const facts = { id: "r1", agent: "a", resumeUrl: null } as unknown as GateFacts;
const approval = { id: "ap1", workspaceId: "w", requestId: "r1", status: "PENDING", requiredApprovals: 1 } as unknown as Approval;
const principal = { kind: "operator", expiresAt: new Date("2027-01-01T00:00:00Z") } as never;

/** What each cache answers after being given an entry: undefined when it kept nothing. */
function remembered(deps: ServiceDeps): Record<string, unknown> {
  deps.gateFacts.remember("w", "r1", "k", facts);
  deps.openedApprovals.opened(approval, 10, facts);
  deps.auditHeadContention.noted("w", now);
  deps.writtenAuditHeads.written("w", { seq: 1, hash: "h" });
  deps.operatorSessionCache.set("t", { principal });
  deps.agentKeyCache.set("k", { principal });
  deps.policyCache.set("w", { version: 1, set: {} } as never);
  deps.channelCache.set("w", { version: 1, channels: [] });
  return {
    "gate-facts": deps.gateFacts.get("w", "r1", "k"),
    "opened-approvals": deps.openedApprovals.take("w", "ap1"),
    "audit-head-contention": deps.auditHeadContention.contended("w", now) || undefined,
    "written-audit-heads": deps.writtenAuditHeads.get("w", now),
    "operator-sessions": deps.operatorSessionCache.get("t"),
    "agent-keys": deps.agentKeyCache.get("k"),
    policies: deps.policyCache.get("w"),
    channels: deps.channelCache.get("w"),
  };
}

describe("hot-path caches turned off (TOLLGATE_CACHES_OFF)", () => {
  it("every cache keeps what it is given when none is off", () => {
    const kept = remembered(createServiceDeps(database, new EventBus()));
    expect(Object.keys(kept).sort()).toEqual([...HOT_PATH_CACHES].sort());
    for (const name of HOT_PATH_CACHES) expect(kept[name], name).toBeDefined();
  });

  it.each(HOT_PATH_CACHES)("%s off keeps nothing, and the others keep theirs", (name) => {
    const kept = remembered(createServiceDeps(database, new EventBus(), { cachesOff: new Set([name]) }));
    for (const other of HOT_PATH_CACHES) {
      if (other === name) expect(kept[other], other).toBeUndefined();
      else expect(kept[other], other).toBeDefined();
    }
  });
});
