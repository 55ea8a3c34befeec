// What every use case is given: the database, the event bus, the clock and the
// receipt signer.
import type { Metrics } from "../observability/metrics.ts";
import type { Database, PrismaClient } from "../db/client.ts";
import type { DirectSql } from "../db/direct-sql.ts";
import type { Prisma } from "../db/generated/client.ts";
import type { EventBus } from "../events/bus.ts";
import { DecisionWaiters } from "../events/waiters.ts";
import { createOutbound, type Outbound } from "../net/outbound.ts";
import { deriveKey, generateSecret } from "../secret.ts";
import { AuditLog } from "./audit.ts";
import type { DigestSink } from "./audit-seal.ts";
import { readAgentKey, readOperatorSession } from "./auth.ts";
import { newPrincipalCache, type PrincipalCache } from "./principal-cache.ts";
import type { AuditHeadContention } from "./approvals/audit-head-contention.ts";
import type { GateFactsCache } from "./approvals/gate-facts-cache.ts";
import type { WrittenAuditHeads } from "./approvals/written-audit-heads.ts";
import type { OpenedApprovals } from "./approvals/opened-approvals.ts";
import * as caches from "./caches-off.ts";
import { AuditTurns } from "./approvals/audit-turns.ts";
import type { AgentPrincipal, OperatorPrincipal } from "../domain/principal.ts";
import { DecisionBatches } from "./approvals/decision-batches.ts";
import { finishQueuedApprovals, type EndedApproval, type QueuedEnding } from "./approvals/finish-approval.ts";
import { createLoginThrottle, type LoginThrottle } from "./login-throttle.ts";
import { newPolicyCache, type PolicyCache } from "./policies/policy-cache.ts";
import { ReceiptSigner } from "./receipts.ts";
import { newChannelCache, type ChannelCache } from "./notifications/channel-cache.ts";
import type { Mailer } from "../net/mailer.ts";
import { SecretBox } from "../secret-box.ts";

export interface ServiceDeps {
  prisma: PrismaClient;
  /** The hot path's one-statement use cases, sent without Prisma's client (db/direct-sql.ts). */
  sql: DirectSql;
  bus: EventBus;
  now: () => Date;
  sessionTtlHours: number;
  /** Verified agent keys by hash, and their reads in flight (principal-cache.ts). */
  agentKeyCache: PrincipalCache<AgentPrincipal>;
  /** Verified operator sessions by token hash, and their reads in flight. */
  operatorSessionCache: PrincipalCache<OperatorPrincipal>;
  waiters: DecisionWaiters;
  /** Compiled policy rules per workspace, checked against the workspace's policyVersion. */
  policyCache: PolicyCache;
  /** Workspaces whose rule decisions currently contend for the audit head (approval.request then locks first). */
  auditHeadContention: AuditHeadContention;
  gateFacts: GateFactsCache;
  writtenAuditHeads: WrittenAuditHeads;
  /** Approvals this node put before a person, kept for their decision. */
  openedApprovals: OpenedApprovals;
  /** This node's writers of a workspace's audit chain take turns (decisions, asks a rule decides). */
  auditTurns: AuditTurns;
  /** Decisions on approvals this node opened, written together when they queue for the audit turn. */
  decisionBatches: DecisionBatches<QueuedEnding, EndedApproval>;
  /** Signs the receipt of every decision that lets a tool run. */
  receipts: ReceiptSigner;
  /** Counts failed logins per account and address; shared through Redis when the server has it. */
  loginThrottle: LoginThrottle;
  /** The workspaces' audit logs, chained with a MAC whose key is not in the database. */
  audit: AuditLog;
  /** Where sealed audit digests are kept, outside the database. */
  auditDigests: DigestSink;
  /** Sends requests out (webhooks), to allowed destinations only. */
  outbound: Outbound;
  /** Enabled notification channels per workspace, checked against its channelVersion. */
  channelCache: ChannelCache;
  /** Email out (TOLLGATE_SMTP_URL); absent: no email channel can send. */
  mailer?: Mailer;
  /** Seals the agent keys' decision-webhook signing secrets. */
  webhookSecrets: SecretBox;
  /** Seals the notification channels' URLs and signing secrets. */
  channelSecrets: SecretBox;
  /** Seals what an adapter keeps to continue a durable run (its framework's run state). */
  runStates: SecretBox;
  /** Signs and checks the tokens by which a request's key lets another key begin work under it. */
  delegationKey: Buffer;
  /** How long after an agent was last seen waiting an approval counts as having no one waiting. */
  agentLivenessMs: number;
  /** The console's base URL, for links in notifications. */
  publicUrl: () => string;
  /** Aborted when the server shuts down, so long-polls answer at once. */
  shutdown: AbortSignal;
  /** This node's Prometheus metrics (absent in tools that run use cases without a server). */
  metrics?: Pick<Metrics, "countPush" | "countHeldConnection">;
}

let processSecret: string | undefined;

export function createServiceDeps(
  { prisma, sql }: Pick<Database, "prisma" | "sql">,
  bus: EventBus,
  options: {
    sessionTtlHours?: number;
    shutdown?: AbortSignal;
    receipts?: ReceiptSigner;
    loginThrottle?: LoginThrottle;
    outbound?: Outbound;
    secret?: string;
    auditDigests?: DigestSink;
    mailer?: Mailer;
    publicUrl?: () => string;
    agentLivenessMs?: number;
    /** Caches turned off, to measure what each saves (TOLLGATE_CACHES_OFF). */
    cachesOff?: ReadonlySet<caches.HotPathCache>;
  } = {},
): ServiceDeps {
  const off = options.cachesOff ?? new Set();
  // Without a server's secret (tests, scripts): one generated secret for the
  // whole process, so every signer and audit log in it agree.
  const secret = options.secret ?? (processSecret ??= generateSecret());
  const auditTurns = new AuditTurns();
  const deps: ServiceDeps = {
    prisma,
    sql,
    bus,
    now: () => new Date(),
    sessionTtlHours: options.sessionTtlHours ?? 12,
    agentKeyCache: newPrincipalCache({ read: (keyHash) => readAgentKey(deps, keyHash), now: () => deps.now(), kept: !off.has("agent-keys") }),
    operatorSessionCache: newPrincipalCache({ read: (tokenHash) => readOperatorSession(deps, tokenHash), now: () => deps.now(), kept: !off.has("operator-sessions") }),
    waiters: new DecisionWaiters(bus),
    policyCache: off.has("policies") ? caches.unkeptLru() : newPolicyCache(),
    auditHeadContention: caches.auditHeadContention(off),
    gateFacts: caches.gateFactsCache(off),
    writtenAuditHeads: caches.writtenAuditHeads(off),
    openedApprovals: caches.openedApprovals(off),
    auditTurns,
    decisionBatches: new DecisionBatches(auditTurns, (workspaceId, queued) => finishQueuedApprovals(deps, workspaceId, queued)),
    receipts:
      options.receipts ??
      new ReceiptSigner({ prisma, secret, issuer: "http://localhost:3000", now: () => deps.now() }),
    audit: new AuditLog(secret),
    auditDigests: options.auditDigests ?? {},
    loginThrottle: options.loginThrottle ?? createLoginThrottle({ deviceKey: deriveKey(secret, "login device cookies v1"), now: () => deps.now() }),
    outbound: options.outbound ?? createOutbound({ allow: [] }),
    channelCache: off.has("channels") ? caches.unkeptLru() : newChannelCache(),
    ...(options.mailer ? { mailer: options.mailer } : {}),
    channelSecrets: new SecretBox(secret, "notification channel secrets v1"),
    webhookSecrets: new SecretBox(secret, "agent key webhook secrets v1"),
    runStates: new SecretBox(secret, "durable run states v1"),
    delegationKey: deriveKey(secret, "call chain delegations v1"),
    publicUrl: options.publicUrl ?? (() => "http://localhost:3000"),
    agentLivenessMs: options.agentLivenessMs ?? 90_000,
    shutdown: options.shutdown ?? new AbortController().signal,
  };
  // A key or an operator's session revoked or changed on any node is read
  // again on this one at its next call; after the link between nodes dropped,
  // every one is. Deleting an entry also forgets its read in flight.
  bus.on("agent-key:changed", ({ keyHash }) => {
    deps.agentKeyCache.delete(keyHash);
  });
  // Which token is an ended session's, or a changed operator's, is known only
  // once read (reads in flight too): every remembered session is read again,
  // one statement per console session.
  bus.on("operator:session-ended", () => deps.operatorSessionCache.clear());
  bus.on("operator:changed", () => deps.operatorSessionCache.clear());
  bus.on("bridge:resumed", () => {
    deps.agentKeyCache.clear();
    deps.operatorSessionCache.clear();
  });
  return deps;
}

export type Tx = Prisma.TransactionClient;
