// The hot path's caches by name, as TOLLGATE_CACHES_OFF names them (caches-off.ts).
export const HOT_PATH_CACHES = ["gate-facts", "opened-approvals", "audit-head-contention", "written-audit-heads", "operator-sessions", "agent-keys", "policies", "channels"] as const;
export type HotPathCache = (typeof HOT_PATH_CACHES)[number];
