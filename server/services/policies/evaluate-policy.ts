// Dry runs for the editor: which rule a call would hit and why, and what a
// changed rule would have done to the workspace's recent approvals.
import { evaluatePolicies, compilePolicySet, gateFor, type CallFacts, type PolicyRule, type PolicySet, type RuleVerdict } from "../../domain/policy.ts";
import { notFound } from "../../domain/errors.ts";
import type { Policy } from "../../db/generated/client.ts";
import type { ServiceDeps } from "../deps.ts";
import { policySetFor } from "./policy-cache.ts";
import { nextPriority, ruleFields, type PolicyInput } from "./policy-input.ts";
import { assertValidRule, ruleOf } from "./policy-rows.ts";
import { workspaceGate } from "./workspace-gate.ts";
import { refuseMixedScripts } from "../workspaces/name-scripts.ts";
import type { ToolAnnotations } from "../../domain/risk.ts";
import type { ToolDefinition } from "../../domain/tool-pins.ts";
import { pinFacts } from "./tool-pins.ts";

export interface DryRunInput {
  agent: string;
  tool: string;
  args: unknown;
  agentKeyId?: string;
  sessionId?: string;
  sessionMetadata?: unknown;
  /** As approval.request takes them: the call is judged as the gateway's would be. */
  annotations?: ToolAnnotations;
  toolDefinition?: ToolDefinition;
}

export interface DryRunResult {
  policyId: string | null;
  name: string | null;
  outcome: "approve" | "reject" | "require";
  /** For "require": who decides and how. */
  gate: { role: string; approvers: number; allow: string[]; timeoutMs: number | null; onTimeout: string } | null;
  message: string | null;
  /** Every rule looked at, in order, with why it did or did not match. */
  trail: RuleVerdict[];
}

async function currentSet(deps: ServiceDeps, workspaceId: string): Promise<PolicySet> {
  const workspace = await deps.prisma.workspace.findUnique({ where: { id: workspaceId }, select: { policyVersion: true } });
  if (!workspace) throw notFound("workspace", workspaceId);
  return policySetFor(deps.policyCache, deps.prisma, workspaceId, workspace.policyVersion);
}

/** policy.evaluate: nothing is recorded. */
export async function dryRunPolicies(deps: ServiceDeps, workspaceId: string, input: DryRunInput): Promise<DryRunResult> {
  await refuseMixedScripts(deps, workspaceId, "agent", input.agent);
  await refuseMixedScripts(deps, workspaceId, "tool", input.tool);
  const set = await currentSet(deps, workspaceId);
  const facts: CallFacts = {
    agent: input.agent,
    tool: input.tool,
    args: input.args,
    agentKeyId: input.agentKeyId ?? null,
    sessionId: input.sessionId ?? null,
    sessionMetadata: input.sessionMetadata ?? null,
    ...(await pinFacts(deps.prisma, workspaceId, input.agent, input.tool, input)),
  };
  const { rule, trail } = evaluatePolicies(set, facts, deps.now(), { explain: true });
  const gate = gateFor(rule, await workspaceGate(deps, workspaceId), {}, input.tool);
  return {
    policyId: rule?.id ?? null,
    name: rule?.name ?? null,
    outcome: gate.kind,
    gate: gate.kind === "require" ? { role: gate.role, approvers: gate.approvers, allow: gate.allow, timeoutMs: gate.timeoutMs, onTimeout: gate.onTimeout } : null,
    message: gate.kind === "require" ? null : gate.message,
    trail,
  };
}

export interface SimulationInput {
  /** The rule as it would be written. */
  draft: PolicyInput;
  /** The rule the draft replaces; left out, the draft is added. */
  replacePolicyId?: string;
  /** How many of the most recent approvals to replay. */
  last: number;
}

type Outcome = "approve" | "reject" | "require";

/**
 * Replays the last N approvals' calls against the rules as they are and as
 * they would be with the draft: "this change would have auto-approved 312 of
 * the last 1,000". Nothing is recorded.
 */
export async function simulatePolicyChange(deps: ServiceDeps, workspaceId: string, input: SimulationInput) {
  const now = deps.now();
  const current = await currentSet(deps, workspaceId);
  const priority = input.draft.priority ?? (input.replacePolicyId
    ? current.rules.find((compiled) => compiled.rule.id === input.replacePolicyId)?.rule.priority
    : undefined) ?? (await nextPriority(deps.prisma, workspaceId));
  const draftRow: Policy = {
    id: input.replacePolicyId ?? "draft",
    workspaceId,
    ...ruleFields(input.draft),
    priority,
    version: 0,
    sourceApprovalId: null,
    matchRewrittenFrom: null,
    createdById: null,
    createdBy: "draft",
    createdAt: now,
    updatedAt: now,
  };
  const draft = ruleOf(draftRow);
  assertValidRule(draft);
  if (input.replacePolicyId && !current.rules.some((compiled) => compiled.rule.id === input.replacePolicyId)) {
    throw notFound("policy", input.replacePolicyId);
  }
  const proposed = compilePolicySet([...current.rules.map((compiled) => compiled.rule).filter((rule: PolicyRule) => rule.id !== input.replacePolicyId), draft]);

  const approvals = await deps.prisma.approval.findMany({
    where: { workspaceId },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: input.last,
    select: {
      id: true,
      tool: true,
      proposedArgs: true,
      sessionId: true,
      status: true,
      task: { select: { agent: true } },
      session: { select: { metadata: true } },
      request: { select: { agentKeyId: true } },
    },
  });
  const outcomeOf = (set: PolicySet, facts: CallFacts): { outcome: Outcome; ruleId: string | null } => {
    const { rule } = evaluatePolicies(set, facts, now);
    return { outcome: rule?.outcome ?? "require", ruleId: rule?.id ?? null };
  };
  const totals = { approve: 0, reject: 0, require: 0 };
  let changed = 0;
  let hitDraft = 0;
  const examples: { approvalId: string; agent: string; tool: string; before: Outcome; after: Outcome }[] = [];
  for (const approval of approvals) {
    const facts: CallFacts = {
      agent: approval.task.agent,
      tool: approval.tool,
      args: approval.proposedArgs,
      agentKeyId: approval.request.agentKeyId,
      sessionId: approval.sessionId,
      sessionMetadata: approval.session.metadata ?? null,
    };
    const before = outcomeOf(current, facts);
    const after = outcomeOf(proposed, facts);
    totals[after.outcome] += 1;
    if (after.ruleId === draft.id) hitDraft += 1;
    if (before.outcome !== after.outcome) {
      changed += 1;
      if (examples.length < 20) examples.push({ approvalId: approval.id, agent: facts.agent, tool: facts.tool, before: before.outcome, after: after.outcome });
    }
  }
  return { replayed: approvals.length, matchedDraft: hitDraft, outcomes: totals, changed, examples };
}
