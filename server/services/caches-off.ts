// The hot path's caches, each of which can be turned off (TOLLGATE_CACHES_OFF),
// so that what one saves can be measured against the same server without it
// (npm run bench:caches). A cache turned off keeps nothing: every call reads
// what the cache would have answered, the path every cache already takes on a
// miss, so turning one off changes no outcome, only the cost.
import { LRUCache } from "lru-cache";
import { AuditHeadContention } from "./approvals/audit-head-contention.ts";
import { GateFactsCache } from "./approvals/gate-facts-cache.ts";
import { OpenedApprovals } from "./approvals/opened-approvals.ts";
import { WrittenAuditHeads } from "./approvals/written-audit-heads.ts";

import type { HotPathCache } from "./cache-names.ts";

export type { HotPathCache } from "./cache-names.ts";

class NoGateFacts extends GateFactsCache {
  override remember(): void {}
}
class NoOpenedApprovals extends OpenedApprovals {
  override opened(): void {}
}
class NoAuditHeadContention extends AuditHeadContention {
  override noted(): void {}
}
class NoWrittenAuditHeads extends WrittenAuditHeads {
  override written(): void {}
}
/** An LRU cache that keeps nothing: every get misses. */
class NoLru<K extends {}, V extends {}> extends LRUCache<K, V> {
  override set(): this {
    return this;
  }
}

export function gateFactsCache(off: ReadonlySet<HotPathCache>): GateFactsCache {
  return off.has("gate-facts") ? new NoGateFacts() : new GateFactsCache();
}
export function openedApprovals(off: ReadonlySet<HotPathCache>): OpenedApprovals {
  return off.has("opened-approvals") ? new NoOpenedApprovals() : new OpenedApprovals();
}
export function auditHeadContention(off: ReadonlySet<HotPathCache>): AuditHeadContention {
  return off.has("audit-head-contention") ? new NoAuditHeadContention() : new AuditHeadContention();
}
export function writtenAuditHeads(off: ReadonlySet<HotPathCache>): WrittenAuditHeads {
  return off.has("written-audit-heads") ? new NoWrittenAuditHeads() : new WrittenAuditHeads();
}
/** An LRU cache that keeps nothing, for the caches that are plain LRU caches (policies, channels); agent keys and operator sessions are turned off in principal-cache.ts. */
export function unkeptLru<K extends {}, V extends {}>(): LRUCache<K, V> {
  return new NoLru<K, V>({ max: 1 });
}
