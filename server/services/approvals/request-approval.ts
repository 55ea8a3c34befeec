// An agent asks to run a tool (or asks a person a question, or to fill in a
// form). The workspace's policy decides at once or puts the call before a
// person; a repeated idempotency key, or the same framework id (externalId) on
// the same request, returns the approval it made.
import { dequal } from "dequal";
import { Prisma, type Approval } from "../../db/generated/client.ts";
import { mayActOn } from "../../domain/authority.ts";
import { DomainError, notFound } from "../../domain/errors.ts";
import { newId } from "../../domain/ids.ts";
import { isActive, type DecisionAction, type RunStatus, type TimeoutOutcome } from "../../domain/lifecycle.ts";
import { parseFormSchema, type FormSchema } from "../../domain/form.ts";
import { assertLockOrder } from "../../domain/lock-order.ts";
import { evaluatePolicies, gateFor, ruleForAnswer, type PolicyRule } from "../../domain/policy.ts";
import type { AgentPrincipal } from "../../domain/principal.ts";
import { toolAllowedByConfig, type ThreadConfig } from "../../domain/thread/config.ts";
import { lockAuditHead, readAuditHead, type AuditHead, type AuditInput, type AuditRow } from "../audit.ts";
import { mayActOnRequest } from "../authority.ts";
import { changesOf, type ChangeRow, type Changes } from "../cascade.ts";
import type { ServiceDeps, Tx } from "../deps.ts";
import { policySetFor } from "../policies/policy-cache.ts";
import { announcementRows, type AnnouncementRow } from "../notifications/announce.ts";
import { gateFactsOf, type GateFacts, type GateFactsRow } from "./gate-facts-cache.ts";
import { askOf, escalationDueAt, reminderDueAt, type Route } from "../../domain/routing.ts";
import { publishChanges, transact, withRetries } from "../transaction.ts";
import { approvalResult, type ApprovalResult } from "./approval-views.ts";
import type { ToolAnnotations } from "../../domain/risk.ts";
import { toolDefinitionSha256, type ToolDefinition } from "../../domain/tool-pins.ts";
import { pinFacts } from "../policies/tool-pins.ts";
import { signReceipt } from "./finish-approval.ts";
import { refuseMixedScripts } from "../workspaces/name-scripts.ts";

export interface RequestApprovalInput {
  requestId: string;
  tool: string;
  args: unknown;
  reason?: string;
  allow?: DecisionAction[];
  timeoutMs?: number;
  onTimeout?: TimeoutOutcome;
  idempotencyKey?: string;
  /** The framework's own id of the paused call: one approval per id and request. */
  externalId?: string;
  /** Markdown for the operator, shown before the arguments. */
  summary?: string;
  kind?: "tool" | "question" | "form";
  /** kind form: the requested schema of primitive fields. */
  form?: unknown;
  /** Calls paused together (one framework turn) share a batch. */
  batch?: string;
  /** The tool's MCP annotations, as the agent's tool declares them. */
  annotations?: ToolAnnotations;
  /** The tool as its MCP server lists it: a rule with `pinned` matches only while its hash is pinned. */
  toolDefinition?: ToolDefinition;
}

/** The columns the gate sets: who may decide, how, by when, and who is asked. */
type GateColumn =
  | "status"
  | "allowedActions"
  | "timeoutMs"
  | "onTimeout"
  | "expiresAt"
  | "requiredRole"
  | "requiredApprovals"
  | "askedRole"
  | "askedOperators"
  | "askedGroup"
  | "route"
  | "agentSeenAt"
  | "escalateAt"
  | "remindAt";

/** The columns a new approval starts without: no decision, no execution, no escalation step yet. */
const UNDECIDED = {
  decisionAction: null,
  decisionMessage: null,
  approvedArgs: null,
  decidedById: null,
  decidedBy: null,
  decidedAt: null,
  deciderKind: null,
  receipt: null,
  executionClaimKey: null,
  executionClaimedAt: null,
  executedArgs: null,
  executionResult: null,
  executedAt: null,
  executionDeviated: null,
  notRunReason: null,
  escalationLevel: 0,
} as const;

/** What approval.request writes: the approval and what comes with it. */
interface Opening {
  approval: Approval;
  /** The approval as the write sends it: serialised once. */
  approvalJson: string;
  traces: { type: string; data: unknown }[];
  notifications: AnnouncementRow[];
  /** A rule's decision, audited; null while a person decides. */
  audit: AuditRow | null;
}

/**
 * An agent asks to run a tool. The workspace's policy decides what happens:
 * a rule may approve or reject at once (recorded like a person's decision,
 * with the rule as decider), or a person decides under the rule's gate (or
 * the workspace default), which the agent's own ask may only narrow.
 *
 * The common case is two statements and no transaction: the facts are read
 * unlocked, and the write checks behind the chain's lock that they are still
 * the facts (openIfUnchanged); the next ask on the request is the write alone,
 * on the facts remembered. When they changed meanwhile, the call is
 * gated again on facts read behind the lock (openBehindLocks), which is also
 * the path of an ask a rule decides while decisions contend for the
 * workspace's audit head (an ask a person decides writes no audit entry, and
 * on remembered facts goes without the locks then too).
 */
export async function requestApproval(deps: ServiceDeps, agent: AgentPrincipal, input: RequestApprovalInput): Promise<ApprovalResult> {
  const { workspaceId } = agent;
  await refuseMixedScripts(deps, workspaceId, "tool", input.tool);
  const form = formOf(input);
  const now = deps.now();
  // A rule may approve inside the transaction below, where the embedded database could not also read the key.
  await deps.receipts.warm(workspaceId);
  let opened: { opening: Opening; changes: Changes };
  try {
    // The write is a transaction of its own, retried like one on a deadlock or serialization failure.
    // While the workspace's audit head is contended, an ask a rule decides is made behind the locks; one a person decides writes no entry.
    const ruleDecidesBehindLocks = deps.auditHeadContention.contended(workspaceId, now);
    const resumeUrl = deps.gateFacts.get(workspaceId, input.requestId, agent.agentKeyId)?.resumeUrl;
    opened =
      (await withRetries(() => openIfUnchanged(deps, agent, input, form, now, ruleDecidesBehindLocks)).catch(behindTheLocks)) ??
      (await openBehindLocks(deps, agent, input, form, now, resumeUrl));
  } catch (error) {
    // A retry: the key or framework id is already taken (the insert's unique
    // index refused it), or what the first ask found has changed since (the
    // request ended once its approval was decided). Answer with what the first
    // ask made. Looked up only on failure, so a first ask costs nothing for it.
    const existing =
      (input.idempotencyKey ? await findByIdempotencyKey(deps, agent, input.idempotencyKey, input.requestId) : null) ??
      (input.externalId ? await findByExternalId(deps, agent, input) : null);
    if (existing) return approvalResult(existing);
    throw error;
  }
  const { opening, changes } = opened;
  // Committed (the locking path's transaction ended; writeIfUnchanged noted its own write already).
  if (opening.audit) deps.writtenAuditHeads.written(workspaceId, opening.audit);
  const created = opening.approval;
  if (created.status === "PENDING") {
    deps.bus.publish("approval:requested", {
      workspaceId,
      approvalId: created.id,
      requestId: created.requestId,
      taskId: created.taskId,
      sessionId: created.sessionId,
      tool: created.tool,
      args: created.proposedArgs,
      status: created.status,
      expiresAt: created.expiresAt?.toISOString() ?? null,
      escalateAt: earliest(created.escalateAt, created.remindAt)?.toISOString() ?? null,
    });
    if (opening.notifications.length > 0) deps.bus.publish("notification:queued", { workspaceId });
    deps.openedApprovals.opened(created, opening.approvalJson.length, deps.gateFacts.get(workspaceId, input.requestId, agent.agentKeyId));
  } else {
    changes.approvals.push(created);
  }
  publishChanges(deps, changes);
  return approvalResult(created);
}

/**
 * The path without a transaction: the facts and the audit head read without a
 * lock (tollgate_read_request_for_approval), the gate built on them, and one
 * statement that locks the chain, finds the facts unchanged and writes
 * (writeIfUnchanged). Facts this node read for an earlier ask on the request
 * with the same key are used without reading them: openOnRememberedFacts.
 * A rule's decision is written in this node's turn at the workspace's audit
 * chain (headInTurn). Null when the facts changed meanwhile, or when another
 * entry took the audit head a rule's decision was chained to (and the
 * workspace then asks behind the locks for a while: AuditHeadContention).
 */
async function openIfUnchanged(
  deps: ServiceDeps,
  agent: AgentPrincipal,
  input: RequestApprovalInput,
  form: FormSchema | null,
  now: Date,
  ruleDecidesBehindLocks: boolean,
): Promise<{ opening: Opening; changes: Changes } | null> {
  const { workspaceId, agentKeyId } = agent;
  const remembered = deps.gateFacts.get(workspaceId, input.requestId, agentKeyId);
  // A key trusted by name may since have lost that trust: without authority the facts are read, and the request is NOT_FOUND.
  if (remembered && mayActOn(agent, remembered)) {
    const opened = await openOnRememberedFacts(deps, agent, input, form, remembered, now, ruleDecidesBehindLocks);
    if (opened !== "read the facts") return opened;
    deps.gateFacts.forget(workspaceId, input.requestId, agentKeyId);
  }
  // Facts read to find that a rule decides would be read again behind the locks.
  if (ruleDecidesBehindLocks) return null;
  const [row] = await deps.sql.query<GateFactsRow & { audit_seq: number | null; audit_hash: string | null }>(Prisma.sql`
    SELECT (r.facts).*, r.audit_seq, r.audit_hash FROM tollgate_read_request_for_approval(${workspaceId}, ${input.requestId}, ${agentKeyId}) r`);
  const facts = gateFactsOf(agent, row);
  const read = row?.audit_seq == null ? null : { seq: row.audit_seq, hash: row.audit_hash! };
  const turn: AuditTurn = { head: null, guessed: false, ruleDecidesBehindLocks };
  let written: Changes | "stale" | "contended";
  let opening: Opening;
  try {
    opening = await gate(deps, deps.prisma, agent, input, form, facts, headInTurn(deps, workspaceId, now, turn, read), now);
    written = await writeIfUnchanged(deps, agent, facts!, turn.head, opening, now, { guessedHead: turn.guessed });
  } finally {
    turn.leave?.();
  }
  if (written === "contended" && turn.guessed) deps.writtenAuditHeads.missed(workspaceId, now);
  if (written === "stale" || written === "contended") return null;
  // The request's webhook address never changes: what was known of it still holds.
  deps.gateFacts.remember(workspaceId, input.requestId, agentKeyId, { ...facts!, resumeUrl: remembered?.resumeUrl });
  return { opening, changes: written };
}

/**
 * The ask on facts remembered from an earlier one (GateFactsCache): the write
 * alone. A rule's decision chains to the entry this node last wrote in the
 * workspace (WrittenAuditHeads), or to the head read now when it knows none,
 * in this node's turn at the workspace's audit chain (headInTurn).
 * "read the facts" when the write found them stale, when a refusal would be
 * made on them (it is only ever made on facts read for the call), or when
 * the guessed audit head was taken; null when a head read now was taken
 * (contention: the caller asks behind the locks).
 */
async function openOnRememberedFacts(
  deps: ServiceDeps,
  agent: AgentPrincipal,
  input: RequestApprovalInput,
  form: FormSchema | null,
  remembered: GateFacts,
  now: Date,
  ruleDecidesBehindLocks: boolean,
): Promise<{ opening: Opening; changes: Changes } | null | "read the facts"> {
  const { workspaceId } = agent;
  const turn: AuditTurn = { head: null, guessed: false, ruleDecidesBehindLocks };
  let written: Changes | "stale" | "contended";
  let opening: Opening | null;
  try {
    opening = await gate(deps, deps.prisma, agent, input, form, remembered, headInTurn(deps, workspaceId, now, turn), now).catch((error: unknown) => {
      if (error instanceof DomainError) return null;
      throw error;
    });
    if (!opening) return "read the facts";
    written = await writeIfUnchanged(deps, agent, remembered, turn.head, opening, now, { guessedHead: turn.guessed });
  } finally {
    turn.leave?.();
  }
  if (written === "stale") return "read the facts";
  if (written !== "contended") return { opening, changes: written };
  if (!turn.guessed) return null;
  deps.writtenAuditHeads.missed(workspaceId, now);
  return "read the facts";
}

/** A rule decides an ask while the workspace's audit head is contended: the ask is made behind the locks (openBehindLocks). */
class RuleDecidesBehindLocks extends Error {}

function behindTheLocks(error: unknown): null {
  if (error instanceof RuleDecidesBehindLocks) return null;
  throw error;
}

/** This node's turn at the workspace's audit chain, entered when a rule decides the ask (AuditTurns). */
interface AuditTurn {
  /** The workspace's audit head is contended (AuditHeadContention): a rule's decision is made behind the locks instead. */
  ruleDecidesBehindLocks: boolean;
  /** The head the rule's entry is chained to; null while no rule decides. */
  head: AuditHead | null;
  /** The head is the entry this node last wrote (WrittenAuditHeads), not one read. */
  guessed: boolean;
  /** Set once the turn is entered; called when the write is done. */
  leave?: () => void;
}

/**
 * The gate's audit head, asked for only when a rule decides: enters this
 * node's turn at the workspace's audit chain, then answers the entry this node
 * last wrote there, unless `read` (the head read with the facts) is newer, or
 * the head read now when it knows neither. While the head is contended, or
 * when the turn does not come in time, it throws RuleDecidesBehindLocks
 * instead, before anything is written.
 */
function headInTurn(deps: ServiceDeps, workspaceId: string, now: Date, turn: AuditTurn, read?: AuditHead | null): () => Promise<AuditHead | null> {
  return async () => {
    if (turn.ruleDecidesBehindLocks) throw new RuleDecidesBehindLocks();
    turn.leave = await deps.auditTurns.enter(workspaceId);
    // The turn did not come in time: the ask queues on the database's audit lock instead.
    if (!turn.leave) throw new RuleDecidesBehindLocks();
    // With a head read before the turn, the entry this node wrote since is newer, even while its guesses are not trusted.
    const written = read === undefined ? deps.writtenAuditHeads.get(workspaceId, now) : deps.writtenAuditHeads.latest(workspaceId);
    turn.guessed = written !== undefined && (!read || written.seq > read.seq);
    turn.head = turn.guessed ? written! : read !== undefined ? read : await readAuditHead(deps, workspaceId);
    return turn.head;
  };
}

/**
 * tollgate_open_approval_if_unchanged: locks the chain, finds behind the lock
 * that the request still runs and its facts have the fingerprint they were
 * gated on (and, when a rule decided, that `head` is still the audit head),
 * and writes. "stale" or "contended", and nothing written, otherwise.
 */
async function writeIfUnchanged(
  deps: ServiceDeps,
  agent: AgentPrincipal,
  facts: GateFacts,
  head: AuditHead | null,
  opening: Opening,
  now: Date,
  { guessedHead = false } = {},
): Promise<Changes | "stale" | "contended"> {
  assertLockOrder(opening);
  const rows = await deps.sql.query<ChangeRow>(Prisma.sql`
    SELECT * FROM tollgate_open_approval_if_unchanged(${agent.workspaceId}, ${agent.agentKeyId}, ${facts.fingerprint}, ${head?.seq ?? null}::int,
      ${opening.approvalJson}::json, ${JSON.stringify(opening.traces)}::json, ${JSON.stringify(opening.notifications)}::json,
      ${opening.audit && JSON.stringify(opening.audit)}::json, ${now}::timestamp(3))`);
  const kind = rows[0]?.kind;
  // A head this node guessed and found taken says nothing of contention: WrittenAuditHeads.
  if (kind === "contended" && !guessedHead) deps.auditHeadContention.noted(agent.workspaceId, now);
  if (kind === "stale" || kind === "contended") return kind;
  // The statement was its own transaction: the entry is committed, and the next writer in this node's turn chains to it.
  if (opening.audit) deps.writtenAuditHeads.written(agent.workspaceId, opening.audit);
  return changesOf(rows);
}

/**
 * The locking path, in one transaction: the chain locked and the facts read
 * behind the lock (tollgate_lock_request_for_approval), the audit head behind
 * the workspace's audit lock when a rule decides, then the write
 * (tollgate_open_approval). A concurrent request.fail or task.cancel either
 * ends the request first (and this is refused) or waits and then cancels this
 * approval too.
 */
async function openBehindLocks(
  deps: ServiceDeps,
  agent: AgentPrincipal,
  input: RequestApprovalInput,
  form: FormSchema | null,
  now: Date,
  resumeUrl: string | null | undefined,
): Promise<{ opening: Opening; changes: Changes }> {
  const { workspaceId, agentKeyId } = agent;
  const { opening, changes, facts } = await transact(deps, async (tx) => {
    const [row] = await tx.$queryRaw<GateFactsRow[]>`
      SELECT * FROM tollgate_lock_request_for_approval(${workspaceId}, ${input.requestId}, ${agentKeyId})`;
    const facts = gateFactsOf(agent, row);
    // The audit entry chains to the head read behind the workspace's audit lock (lock order step 4).
    const opening = await gate(deps, tx, agent, input, form, facts, () => lockAuditHead(tx, workspaceId), now);
    assertLockOrder(opening);
    const rows = await tx.$queryRaw<ChangeRow[]>`
      SELECT * FROM tollgate_open_approval(${opening.approvalJson}::json, ${JSON.stringify(opening.traces)}::json,
        ${JSON.stringify(opening.notifications)}::json, ${opening.audit && JSON.stringify(opening.audit)}::json, ${now}::timestamp(3))`;
    return { opening, changes: changesOf(rows), facts: facts! };
  });
  // The next ask on the request is the write alone (openOnRememberedFacts), which checks the facts again.
  deps.gateFacts.remember(workspaceId, input.requestId, agentKeyId, { ...facts, resumeUrl });
  return { opening, changes };
}

/**
 * Gates the call on the request's facts: refuses it (no such request, an
 * ended one, a tool the thread leaves out), or builds the approval a rule
 * decided (audited, chained after `auditHead()`) or the pending one a person
 * decides, with its announcements.
 */
async function gate(
  deps: ServiceDeps,
  db: Tx,
  agent: AgentPrincipal,
  input: RequestApprovalInput,
  form: FormSchema | null,
  request: GateFacts | null,
  auditHead: () => Promise<AuditHead | null>,
  now: Date,
): Promise<Opening> {
  const { workspaceId } = agent;
  if (!request) throw notFound("request", input.requestId);
  if (!isActive(request.status)) {
    throw new DomainError("PRECONDITION_FAILED", `request ${request.id} already ended as ${request.status}; approvals are requested by running requests`);
  }
  const config = (request.config ?? null) as ThreadConfig | null;
  // The thread's tool list only narrows: a tool it leaves out is refused whatever the policy says.
  if (!toolAllowedByConfig(config, input.tool)) {
    throw new DomainError(
      "FORBIDDEN",
      `tool "${input.tool}" is not enabled in the thread of task ${request.taskId} (enabled: ${(config?.enabledTools ?? []).join(", ") || "none"}); enable it with thread.configure first`,
    );
  }
  const matched = evaluatePolicies(
    await policySetFor(deps.policyCache, db, workspaceId, request.policyVersion),
    { agent: request.agent, tool: input.tool, agentKeyId: agent.agentKeyId, sessionId: request.sessionId, sessionMetadata: request.metadata, args: input.args, ...(await pinFacts(db, workspaceId, request.agent, input.tool, input)) },
    now,
  ).rule;
  // A question or a form is answered by a person: the rule's reject, role,
  // route and timeout hold, but no rule answers it (ruleForAnswer).
  const answered = input.kind === "question" || input.kind === "form";
  const rule = answered ? ruleForAnswer(matched) : matched;
  const defaults = { timeoutMs: request.defaultTimeoutMs, onTimeout: request.defaultOnTimeout === "cancel" ? ("cancel" as const) : ("reject" as const) };
  const answerWith: DecisionAction[] | undefined = input.kind === "question" ? ["respond"] : input.kind === "form" ? ["edit"] : undefined;
  const gated = gateFor(rule, defaults, answerWith ? { ...input, allow: answerWith } : input, input.tool);
  const asked = {
    ...UNDECIDED,
    id: newId("apr"),
    workspaceId,
    sessionId: request.sessionId,
    taskId: request.taskId,
    requestId: request.id,
    agentKeyId: agent.agentKeyId,
    tool: input.tool,
    proposedArgs: input.args as Approval["proposedArgs"],
    reason: input.reason ?? null,
    idempotencyKey: input.idempotencyKey ?? null,
    externalId: input.externalId ?? null,
    summary: input.summary ?? null,
    kind: input.kind ?? "tool",
    form: form as Approval["form"],
    batch: input.batch ?? null,
    policyId: rule?.id ?? null,
    policyName: rule?.name ?? null,
    policyVersion: rule?.version ?? null,
    riskLabel: rule?.riskLabel ?? null,
    riskPaths: rule?.riskPaths ?? [],
    toolAnnotations: (input.annotations ?? null) as Approval["toolAnnotations"],
    ...definitionColumns(input),
    createdAt: now,
  };
  const requested = { type: "approval.requested", data: { approvalId: asked.id, args: input.args, policy: rule?.name ?? null } };
  if (gated.kind !== "require") {
    // The head first: asking for it may send the call behind the locks (headInTurn), before a receipt is signed for nothing.
    const head = await auditHead();
    const decided = await policyDecision(deps, { ...asked, agent: request.agent }, gated.rule, gated.kind, gated.message, now);
    const [audit] = deps.audit.chainAfter(head, workspaceId, [decided.audit], now);
    return { approval: decided.approval, approvalJson: JSON.stringify(decided.approval), traces: [requested, decided.trace], notifications: [], audit: audit! };
  }
  const expiresAt = gated.timeoutMs ? new Date(now.getTime() + gated.timeoutMs) : null;
  const route = (rule ? rule.route : request.defaultRoute) as Route | null;
  const ask = askOf(route?.to, gated.role);
  const approval: Approval = {
    ...asked,
    status: "PENDING",
    allowedActions: gated.allow,
    timeoutMs: gated.timeoutMs,
    onTimeout: gated.onTimeout,
    expiresAt,
    requiredRole: gated.role,
    requiredApprovals: gated.approvers,
    askedRole: ask.role,
    askedOperators: ask.operators,
    askedGroup: ask.group,
    route: route as Approval["route"],
    agentSeenAt: now,
    escalateAt: escalationDueAt(route, now, 0),
    remindAt: reminderDueAt(route, now, expiresAt),
  };
  const notifications = await announcementRows(
    deps,
    db,
    { workspaceId, approvalId: approval.id, reason: "REQUESTED", level: 0, ...(route?.channels ? { channels: route.channels } : {}), channelVersion: request.channelVersion },
    now,
  );
  return { approval, approvalJson: JSON.stringify(approval), traces: [requested], notifications, audit: null };
}

/**
 * The tool's definition as its server listed it, with its pin hash: kept so
 * an admin can pin exactly what the reviewer saw. One for another tool than
 * the call's is not this call's (the rules ignore it too).
 */
function definitionColumns(input: RequestApprovalInput): Pick<Approval, "toolDefinition" | "toolDefinitionSha256"> {
  const definition = input.toolDefinition;
  if (!definition || definition.name !== input.tool) return { toolDefinition: null, toolDefinitionSha256: null };
  return { toolDefinition: definition as unknown as Approval["toolDefinition"], toolDefinitionSha256: toolDefinitionSha256(definition) };
}

/**
 * A rule decided: the approval is written already decided, with the rule (as
 * it is now) for decider, and traced and audited exactly like a person's
 * decision. The chain never pauses.
 */
async function policyDecision(
  deps: ServiceDeps,
  asked: Omit<Approval, GateColumn> & { agent: string },
  rule: PolicyRule,
  outcome: "approve" | "reject",
  message: string | null,
  now: Date,
): Promise<{ approval: Approval; trace: { type: string; data: unknown }; audit: AuditInput }> {
  const { agent, ...fields } = asked;
  const decidedBy = `policy:${rule.name}`;
  const approved = outcome === "approve";
  const approval: Approval = {
    ...fields,
    status: approved ? "APPROVED" : "REJECTED",
    allowedActions: [],
    timeoutMs: null,
    onTimeout: "reject",
    expiresAt: null,
    requiredRole: "OPERATOR",
    requiredApprovals: 1,
    askedRole: null,
    askedOperators: [],
    askedGroup: null,
    route: null,
    agentSeenAt: null,
    escalateAt: null,
    remindAt: null,
    decisionAction: outcome,
    decisionMessage: message,
    approvedArgs: approved ? fields.proposedArgs : null,
    decidedBy,
    decidedById: rule.id,
    deciderKind: "policy",
    decidedAt: now,
    receipt: approved ? await signReceipt(deps, { ...fields, agent, approvedArgs: fields.proposedArgs, decidedBy, decidedAt: now }) : null,
  };
  return {
    approval,
    trace: { type: "approval.decided", data: { approvalId: approval.id, status: approval.status, action: outcome, decidedBy } },
    audit: {
      actor: { type: "policy", id: rule.id, label: decidedBy },
      action: "approval.decided",
      subjectType: "approval",
      subjectId: approval.id,
      data: { status: approval.status, action: outcome, message, tool: approval.tool, policy: { id: rule.id, name: rule.name, version: rule.version } },
    },
  };
}

async function findByIdempotencyKey(deps: ServiceDeps, agent: AgentPrincipal, key: string, requestId: string) {
  const existing = await deps.prisma.approval.findUnique({ where: { agentKeyId_idempotencyKey: { agentKeyId: agent.agentKeyId, idempotencyKey: key } } });
  if (existing && existing.requestId !== requestId) {
    throw new DomainError(
      "CONFLICT",
      `idempotencyKey "${key}" was already used for approval ${existing.id} of request ${existing.requestId}; use a new key for a different approval`,
    );
  }
  return existing;
}

/**
 * The approval a framework id already names on this request. The same call
 * (tool and arguments equal as JSON values) gets it back, so a retried or
 * restarted adapter finds its approval; another call under the same id is a
 * CONFLICT, since the decision must map back to exactly one call.
 */
async function findByExternalId(deps: ServiceDeps, agent: AgentPrincipal, input: RequestApprovalInput) {
  const externalId = input.externalId!;
  const existing = await deps.prisma.approval.findUnique({ where: { requestId_externalId: { requestId: input.requestId, externalId } } });
  if (!existing) return null;
  if (existing.workspaceId !== agent.workspaceId || !(await mayActOnRequest(deps.prisma, agent, existing.requestId))) {
    throw notFound("request", input.requestId);
  }
  if (existing.tool !== input.tool || !dequal(existing.proposedArgs, input.args)) {
    throw new DomainError(
      "CONFLICT",
      `externalId "${externalId}" of request ${input.requestId} already names approval ${existing.id} for tool "${existing.tool}" with other arguments; one framework id names one call, so ask for another call under its own id`,
      { field: "externalId", approvalId: existing.id },
    );
  }
  return existing;
}

/** A form's schema, checked; a form without one, or a schema on another kind, is refused. */
function formOf(input: RequestApprovalInput): FormSchema | null {
  if (input.kind === "form") {
    if (input.form === undefined) throw new DomainError("BAD_INPUT", `a form approval needs form: the JSON schema of the fields to fill in`, { field: "form" });
    return parseFormSchema(input.form);
  }
  if (input.form !== undefined) throw new DomainError("BAD_INPUT", `form is only for kind "form"; this approval is a ${input.kind ?? "tool"} approval`, { field: "form" });
  return null;
}

function earliest(...times: Array<Date | null>): Date | null {
  const set = times.filter((time): time is Date => time !== null);
  return set.length ? new Date(Math.min(...set.map((time) => time.getTime()))) : null;
}

