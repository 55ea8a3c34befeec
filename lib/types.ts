// Shapes of what the console reads, inferred from the server's router.
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@/server/api/router";

export type Outputs = inferRouterOutputs<AppRouter>;

export type ApprovalItem = Outputs["approval"]["list"]["items"][number];
export type Decision = NonNullable<ApprovalItem["decision"]>;
export type DecisionAction = Decision["action"];
export type SessionItem = Outputs["session"]["list"]["items"][number];
export type TaskTreeResult = Outputs["task"]["tree"];
export type TaskNode = TaskTreeResult["roots"][number];
export type TimelineEvent = Outputs["task"]["timeline"]["events"][number];
export type RequestWithChain = Outputs["request"]["get"];
export type AuditItem = Outputs["audit"]["list"]["items"][number];
export type PolicyItem = Outputs["policy"]["list"]["items"][number];
export type DryRunResult = Outputs["policy"]["evaluate"];
export type SimulationResult = Outputs["policy"]["simulate"];
