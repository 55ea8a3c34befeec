// The console's presenter: approvals as the inbox lists and opens them, with
// their gate, decision, votes and execution. Reads only.
import { Prisma, type Approval } from "../../db/generated/client.ts";
import { notFound } from "../../domain/errors.ts";
import type { FormSchema } from "../../domain/form.ts";
import { isActive, type ApprovalStatus, type DecisionAction, type RunStatus } from "../../domain/lifecycle.ts";
import type { ServiceDeps } from "../deps.ts";
import { decisionPayload } from "./approval-views.ts";
import { isAskedOf } from "../../domain/routing.ts";
import { riskFlags, type ToolAnnotations } from "../../domain/risk.ts";

export interface ApprovalListFilter {
  status?: ApprovalStatus | "DECIDED";
  sessionId?: string;
  agent?: string;
  tool?: string;
  /** Free text: found in the tool, the agent, the session's title, the reason or the arguments' text. */
  text?: string;
  /** Only these approvals (the console refreshes the ones a live event named). */
  approvalIds?: string[];
  requestId?: string;
  batch?: string;
  limit: number;
  /** Id of the last item of the previous page. */
  cursor?: string;
}

const REQUEST = { select: { resumeUrl: true, runId: true, status: true } };
const SESSION = { select: { title: true } };
const VOTES = { select: { decidedBy: true, createdAt: true, action: true }, orderBy: [{ createdAt: "asc" as const }, { operatorId: "asc" as const }] };
const INCLUDE = { task: { select: { agent: true, framework: true } }, session: SESSION, request: REQUEST, votes: VOTES };

/** The operator looking: an approval whose routing names them (or their group) is asked of them. */
export interface Viewer {
  email: string;
  groups: string[];
}

type ListedApproval = Approval & { task: { agent: string; framework: string | null }; session: { title: string | null }; request: { resumeUrl: string | null; runId: string | null; status: RunStatus }; votes: { decidedBy: string; createdAt: Date; action: DecisionAction }[] };

/**
 * Whether anyone will act on a decision: "webhook" (it is delivered to the
 * request's resumeUrl), "waiting" (an agent asked about it within the
 * liveness window), "parked" (nobody waits now, but the request belongs to a
 * durable run, which continues with the decision when its agent starts
 * again), or "gone" (nobody has: a decision is recorded, but nothing may
 * run). Null once decided.
 */
function agentWaiting(approval: ListedApproval, liveness?: Liveness): "webhook" | "waiting" | "parked" | "gone" | null {
  if (approval.status !== "PENDING" || !liveness) return null;
  if (approval.request.resumeUrl) return "webhook";
  const seen = approval.agentSeenAt ?? approval.createdAt;
  if (liveness.now.getTime() - seen.getTime() <= liveness.windowMs) return "waiting";
  return approval.request.runId ? "parked" : "gone";
}

/**
 * A claim to run the tool with no report of what ran, whose claimant has
 * stopped: its request ended, or the claim is older than the liveness window.
 * The tool may or may not have run; it is never run again automatically.
 */
function executionUnknown(approval: ListedApproval, liveness?: Liveness): boolean {
  if (!approval.executionClaimedAt || approval.executedAt || approval.notRunReason !== null) return false;
  if (!isActive(approval.request.status)) return true;
  return liveness !== undefined && liveness.now.getTime() - approval.executionClaimedAt.getTime() > liveness.windowMs;
}

export interface Liveness {
  now: Date;
  windowMs: number;
}

function riskOf(approval: Approval) {
  const annotations = (approval.toolAnnotations ?? null) as ToolAnnotations | null;
  const rule = approval.riskLabel !== null || approval.riskPaths.length > 0 ? { label: approval.riskLabel, paths: approval.riskPaths } : null;
  return { label: approval.riskLabel, flags: riskFlags(approval.proposedArgs, annotations, rule) };
}

/**
 * The MCP tool the call came with, as an admin would pin it from here: its
 * hash covers the input schema too, which stays on the approval, unsent.
 */
function mcpToolOf(approval: Approval): { name: string; description: string | null; sha256: string } | null {
  const definition = approval.toolDefinition as { name?: unknown; description?: unknown } | null;
  if (!definition || !approval.toolDefinitionSha256 || typeof definition.name !== "string") return null;
  return { name: definition.name, description: typeof definition.description === "string" ? definition.description : null, sha256: approval.toolDefinitionSha256 };
}

export function approvalItem(approval: ListedApproval, viewer?: Viewer, liveness?: Liveness) {
  const ask = { role: approval.askedRole ?? approval.requiredRole, operators: approval.askedOperators, group: approval.askedGroup };
  return {
    approvalId: approval.id,
    requestId: approval.requestId,
    taskId: approval.taskId,
    sessionId: approval.sessionId,
    sessionTitle: approval.session.title,
    agent: approval.task.agent,
    framework: approval.task.framework,
    tool: approval.tool,
    args: approval.proposedArgs,
    reason: approval.reason,
    summary: approval.summary,
    externalId: approval.externalId,
    kind: approval.kind,
    form: approval.form as FormSchema | null,
    batch: approval.batch,
    allow: approval.allowedActions,
    status: approval.status,
    createdAt: approval.createdAt.toISOString(),
    expiresAt: approval.expiresAt?.toISOString() ?? null,
    onTimeout: approval.onTimeout,
    decision: decisionPayload(approval) ?? null,
    // A cancellation is not a decision (no action), but it has an author, a time and a reason.
    cancellation:
      approval.status === "CANCELED" && !approval.decisionAction && approval.decidedBy
        ? { by: approval.decidedBy, at: approval.decidedAt?.toISOString() ?? null, reason: approval.decisionMessage }
        : null,
    approvedArgs: approval.approvedArgs ?? null,
    executedArgs: approval.executedArgs ?? null,
    executionResult: approval.executionResult ?? null,
    executedAt: approval.executedAt?.toISOString() ?? null,
    executionDeviated: approval.executionDeviated,
    policy: approval.policyId ? { policyId: approval.policyId, name: approval.policyName, version: approval.policyVersion } : null,
    annotations: (approval.toolAnnotations ?? null) as ToolAnnotations | null,
    mcpTool: mcpToolOf(approval),
    // What the reviewer must look at: the rule's label (as it was when asked) and every flag found.
    risk: riskOf(approval),
    decider: approval.deciderKind,
    requiredRole: approval.requiredRole,
    requiredApprovals: approval.requiredApprovals,
    votes: approval.votes.map((vote) => ({ decidedBy: vote.decidedBy, decidedAt: vote.createdAt.toISOString(), action: vote.action })),
    receipt: approval.receipt,
    asked: { ...ask, escalationLevel: approval.escalationLevel },
    agentWaiting: agentWaiting(approval, liveness),
    runId: approval.request.runId,
    executionClaimedAt: approval.executionClaimedAt?.toISOString() ?? null,
    executionUnknown: executionUnknown(approval, liveness),
    notRunReason: approval.notRunReason,
    agentSeenAt: (approval.agentSeenAt ?? approval.createdAt).toISOString(),
    askedOfYou: viewer !== undefined && isAskedOf({ ...ask, role: ask.role === "ADMIN" ? "ADMIN" : "OPERATOR" }, viewer),
  };
}

export type ApprovalItem = ReturnType<typeof approvalItem>;

/** Newest first: pending ones by creation, decided ones by decision time. */
/** LIKE's wildcards taken literally: a search for "50%" means those three characters. */
const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;

/**
 * Approvals of the workspace whose arguments' JSON text contains `text`, in any
 * case. Arguments are stored as the agent sent them (json, not jsonb), so the
 * text searched is the one the console shows.
 */
async function idsWithArgumentText(deps: ServiceDeps, workspaceId: string, text: string, status: ApprovalListFilter["status"]): Promise<string[]> {
  const rows = await deps.prisma.$queryRaw<{ id: string }[]>`
    SELECT id FROM "Approval"
    WHERE "workspaceId" = ${workspaceId}
      ${status === "DECIDED" ? Prisma.sql`AND status <> 'PENDING'` : status ? Prisma.sql`AND status = ${status}::"ApprovalStatus"` : Prisma.empty}
      AND "proposedArgs"::text ILIKE ${likePattern(text)} ESCAPE '\\'`;
  return rows.map((row) => row.id);
}

export async function listApprovals(deps: ServiceDeps, workspaceId: string, filter: ApprovalListFilter, viewer?: Viewer): Promise<{ items: ApprovalItem[]; nextCursor: string | null; total: number }> {
  const decided = filter.status === "DECIDED";
  const text = filter.text?.trim();
  const textMatch = (value: string) => ({ contains: value, mode: "insensitive" as const });
  const status: Prisma.ApprovalWhereInput["status"] = decided ? { not: "PENDING" } : filter.status === "DECIDED" ? undefined : filter.status;
  const where: Prisma.ApprovalWhereInput = {
    workspaceId,
    ...(status ? { status } : {}),
    ...(filter.sessionId ? { sessionId: filter.sessionId } : {}),
    // Substrings, in any case: "email" finds send_email and Email_Digest.
    ...(filter.tool ? { tool: { contains: filter.tool, mode: "insensitive" as const } } : {}),
    ...(filter.agent ? { task: { agent: { contains: filter.agent, mode: "insensitive" as const } } } : {}),
    ...(filter.approvalIds ? { id: { in: filter.approvalIds } } : {}),
    // The calls one request paused together.
    ...(filter.requestId ? { requestId: filter.requestId } : {}),
    ...(filter.batch ? { batch: filter.batch } : {}),
    ...(text
      ? {
          OR: [
            { tool: textMatch(text) },
            { task: { agent: textMatch(text) } },
            { session: { title: textMatch(text) } },
            { reason: textMatch(text) },
            { id: { in: await idsWithArgumentText(deps, workspaceId, text, filter.status) } },
          ],
        }
      : {}),
  };
  const rows = await deps.prisma.approval.findMany({
    where,
    include: INCLUDE,
    orderBy: decided ? [{ decidedAt: "desc" }, { id: "desc" }] : [{ createdAt: "desc" }, { id: "desc" }],
    take: filter.limit + 1,
    ...(filter.cursor ? { cursor: { id: filter.cursor }, skip: 1 } : {}),
  });
  const page = rows.slice(0, filter.limit);
  const nextCursor = rows.length > filter.limit ? (page.at(-1)?.id ?? null) : null;
  // Counting is only needed when the page does not already show everything.
  const total = nextCursor || filter.cursor ? await deps.prisma.approval.count({ where }) : page.length;
  const liveness = { now: deps.now(), windowMs: deps.agentLivenessMs };
  const items = page.map((row) => approvalItem(row, viewer, liveness));
  // Waiting approvals asked of the viewer by name or group come first (a stable sort keeps the rest newest first).
  if (!decided) items.sort((a, b) => Number(b.askedOfYou) - Number(a.askedOfYou));
  return { items, nextCursor, total };
}

export async function getApproval(deps: ServiceDeps, workspaceId: string, approvalId: string, viewer?: Viewer) {
  const approval = await deps.prisma.approval.findFirst({ where: { id: approvalId, workspaceId }, include: INCLUDE });
  if (!approval) throw notFound("approval", approvalId);
  return approvalItem(approval, viewer, { now: deps.now(), windowMs: deps.agentLivenessMs });
}

/** The viewer as routing sees them: their email and groups. */
export async function viewerOf(deps: ServiceDeps, operatorId: string, email: string): Promise<Viewer> {
  const operator = await deps.prisma.operator.findUnique({ where: { id: operatorId }, select: { groups: true } });
  return { email, groups: operator?.groups ?? [] };
}
