// Request and response shapes of the policy procedures.
import { z } from "zod";
import { CONDITION_OPS, LAST_PRIORITY } from "../../domain/policy-terms.ts";
import { LIMITS } from "../../domain/json.ts";
import { zAction, zToolAnnotations } from "../outputs.ts";
import { visibleOnly, zCallName, zId, zJson, zJsonObject, zName } from "../schemas.ts";

const MAX_TIMEOUT_MS = 24 * 24 * 3600_000;

export const zCondition = z.object({
  path: z.string().min(1).max(500),
  op: z.enum(CONDITION_OPS),
  value: z.json().optional(),
});

const zGlob = z.string().trim().min(1, "must be a glob such as send_* or *").max(LIMITS.nameChars).superRefine(visibleOnly);

export const zPolicyMatch = z.strictObject({
  agent: zGlob.optional(),
  tool: zGlob.optional(),
  agentKeyId: zId("key").optional(),
  sessionId: zId("ses").optional(),
  session: z.array(zCondition).max(20).optional(),
  args: z.array(zCondition).max(20).optional(),
  annotations: z
    .strictObject({ readOnlyHint: z.boolean().optional(), destructiveHint: z.boolean().optional(), idempotentHint: z.boolean().optional(), openWorldHint: z.boolean().optional() })
    .optional(),
  pinned: z.boolean().optional(),
});

/**
 * A tool as an MCP server lists it; the parts a pin covers are kept, anything
 * else an entry of tools/list carries (title, outputSchema, _meta) is left out.
 */
export const zToolDefinition = z.object({
  name: zCallName,
  description: z.string().max(LIMITS.summaryChars).optional(),
  annotations: zToolAnnotations.optional(),
  inputSchema: zJsonObject(LIMITS.formBytes).optional(),
});

export const zToolPinView = z.object({
  pinId: z.string(),
  agent: z.string(),
  tool: z.string(),
  sha256: z.string(),
  definition: z.unknown(),
  pinnedBy: z.string(),
  createdAt: z.string(),
});

const zAudience = z.strictObject({
  role: z.enum(["OPERATOR", "ADMIN"]).optional(),
  operators: z.array(z.email("must be an operator's email address")).max(50).optional(),
  group: z.string().trim().min(1).max(100).optional(),
});
const zChannelNames = z.array(z.string().trim().min(1).max(100)).max(20);

/** Who a person-deciding gate asks, who next when nobody decides, and the reminder before expiry. */
export const zRoute = z.strictObject({
  to: zAudience.optional(),
  channels: zChannelNames.optional(),
  escalate: z
    .array(z.strictObject({ afterSeconds: z.number().int().min(1).max(MAX_TIMEOUT_MS / 1000), to: zAudience, channels: zChannelNames.optional() }))
    .max(5)
    .optional(),
  remindBeforeExpirySeconds: z.number().int().min(1).max(MAX_TIMEOUT_MS / 1000).optional(),
});

const zRuleFields = {
  route: zRoute.nullish(),
  description: z.string().max(2000).nullish(),
  message: z.string().max(LIMITS.messageChars).nullish(),
  role: z.enum(["OPERATOR", "ADMIN"]).optional(),
  approvers: z.number().int().min(1).max(10).optional(),
  allow: z.array(zAction).min(1).optional(),
  timeoutMs: z.number().int().min(1000).max(MAX_TIMEOUT_MS).nullish(),
  onTimeout: z.enum(["reject", "cancel"], { message: 'must be "reject" or "cancel": a timeout never approves' }).optional(),
  allowApproveOnTimeout: z.boolean().optional(),
  priority: z.number().int().min(0).max(LAST_PRIORITY - 1).optional(),
  enabled: z.boolean().optional(),
  expiresAt: z.iso.datetime({ offset: true }).transform((value) => new Date(value)).nullish(),
  riskLabel: z.string().trim().max(80, "must be at most 80 characters: a short label such as \"deletes customer data\"").nullish(),
  riskPaths: z.array(z.string().min(2).max(500)).max(20, "at most 20 paths").optional(),
};

export const zPolicyInput = z.object({
  name: zName,
  match: zPolicyMatch.default({}),
  outcome: z.enum(["approve", "reject", "require"]),
  ...zRuleFields,
});

export const zPolicyUpdate = z.object({
  policyId: zId("pol"),
  name: zName.optional(),
  match: zPolicyMatch.optional(),
  outcome: z.enum(["approve", "reject", "require"]).optional(),
  ...zRuleFields,
});

const zStoredCondition = z.object({ path: z.string(), op: z.enum(CONDITION_OPS), value: z.unknown().optional() });

export const zPolicyView = z.object({
  policyId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  priority: z.number(),
  enabled: z.boolean(),
  version: z.number(),
  match: z.object({
    agent: z.string().optional(),
    tool: z.string().optional(),
    agentKeyId: z.string().optional(),
    sessionId: z.string().optional(),
    session: z.array(zStoredCondition).optional(),
    args: z.array(zStoredCondition).optional(),
    // Shown and given back whole: an editor that lost them would widen the rule when saving it.
    annotations: zPolicyMatch.shape.annotations,
    pinned: z.boolean().optional(),
  }),
  outcome: z.enum(["approve", "reject", "require"]),
  message: z.string().nullable(),
  role: z.enum(["OPERATOR", "ADMIN"]),
  approvers: z.number(),
  allow: z.array(zAction),
  timeoutMs: z.number().nullable(),
  onTimeout: z.enum(["reject", "cancel"]),
  allowApproveOnTimeout: z.boolean(),
  route: zRoute.nullable(),
  riskLabel: z.string().nullable(),
  riskPaths: z.array(z.string()),
  matchRewrittenFrom: z.object({ agent: z.string().optional(), tool: z.string().optional() }).nullable(),
  remembered: z.boolean(),
  sourceApprovalId: z.string().nullable(),
  expiresAt: z.string().nullable(),
  createdBy: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const zDryRunInput = z.object({
  agent: zCallName,
  tool: zCallName,
  args: zJson(LIMITS.argsBytes).default({}),
  agentKeyId: zId("key").optional(),
  sessionId: zId("ses").optional(),
  sessionMetadata: zJson(LIMITS.metadataBytes).optional(),
  /** The MCP tool's annotations as its server would send them; a missing hint counts as MCP's default. */
  annotations: zToolAnnotations.optional(),
  /** The tool as its server lists it: a rule with `pinned` matches only while this is pinned for the agent. */
  toolDefinition: zToolDefinition.optional(),
});

export const zDryRunResult = z.object({
  policyId: z.string().nullable(),
  name: z.string().nullable(),
  outcome: z.enum(["approve", "reject", "require"]),
  gate: z
    .object({ role: z.string(), approvers: z.number(), allow: z.array(z.string()), timeoutMs: z.number().nullable(), onTimeout: z.string() })
    .nullable(),
  message: z.string().nullable(),
  trail: z.array(z.object({ policyId: z.string(), name: z.string(), matched: z.boolean(), reason: z.string() })),
});

export const zSimulationInput = z.object({
  draft: zPolicyInput,
  replacePolicyId: zId("pol").optional(),
  last: z.number().int().min(1).max(10_000).default(1000),
});

const zOutcome = z.enum(["approve", "reject", "require"]);

export const zSimulationResult = z.object({
  replayed: z.number(),
  matchedDraft: z.number(),
  outcomes: z.object({ approve: z.number(), reject: z.number(), require: z.number() }),
  changed: z.number(),
  examples: z.array(z.object({ approvalId: z.string(), agent: z.string(), tool: z.string(), before: zOutcome, after: zOutcome })),
});

export const zWorkspaceGate = z.object({
  timeoutMs: z.number().int().min(1000).max(MAX_TIMEOUT_MS).nullable(),
  route: zRoute.nullish(),
  onTimeout: z.enum(["reject", "cancel"], { message: 'must be "reject" or "cancel": a timeout never approves' }),
});
