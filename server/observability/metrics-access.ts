// Who may read /metrics: the bearer of TOLLGATE_METRICS_TOKEN when one is set;
// without one, anyone (the default, said at start in production, as the page
// lists every workspace's pending count) or no one (TOLLGATE_METRICS_WITHOUT_TOKEN=refuse).
import type { Env } from "../env.ts";

export type MetricsAccess = { kind: "token"; token: string } | { kind: "open"; warning?: string } | { kind: "refused" };

export function metricsAccess(env: Pick<Env, "NODE_ENV" | "TOLLGATE_METRICS_TOKEN" | "TOLLGATE_METRICS_WITHOUT_TOKEN">): MetricsAccess {
  if (env.TOLLGATE_METRICS_TOKEN) return { kind: "token", token: env.TOLLGATE_METRICS_TOKEN };
  if (env.TOLLGATE_METRICS_WITHOUT_TOKEN === "refuse") return { kind: "refused" };
  if (env.NODE_ENV !== "production") return { kind: "open" };
  return {
    kind: "open",
    warning:
      "/metrics is open to anyone who can reach this server (it lists every workspace's pending approvals): " +
      "set TOLLGATE_METRICS_TOKEN to require it, or TOLLGATE_METRICS_WITHOUT_TOKEN=refuse to close /metrics",
  };
}
