// Policy rules: admins write them, everyone may read them and dry-run a call.
import { z } from "zod";
import { createPolicy } from "../../services/policies/create-policy.ts";
import { deletePolicy } from "../../services/policies/delete-policy.ts";
import { dryRunPolicies, simulatePolicyChange } from "../../services/policies/evaluate-policy.ts";
import { listPolicies } from "../../services/policies/list-policies.ts";
import { pinToolFromApproval } from "../../services/policies/pin-tool-from-approval.ts";
import { listToolPins, pinTool, unpinTool } from "../../services/policies/tool-pins.ts";
import { updatePolicy } from "../../services/policies/update-policy.ts";
import { setWorkspaceGate, workspaceGate } from "../../services/policies/workspace-gate.ts";
import { zCallName, zId, zName } from "../schemas.ts";
import { adminProcedure, operatorProcedure, router } from "../trpc.ts";
import {
  zDryRunInput,
  zDryRunResult,
  zPolicyInput,
  zPolicyUpdate,
  zPolicyView,
  zSimulationInput,
  zSimulationResult,
  zToolDefinition,
  zToolPinView,
  zWorkspaceGate,
} from "./policy.types.ts";

export const policyRouter = router({
  list: operatorProcedure
    .output(z.object({ items: z.array(zPolicyView) }))
    .query(async ({ ctx }) => ({ items: await listPolicies(ctx.deps, ctx.operator.workspaceId) })),

  create: adminProcedure
    .input(zPolicyInput)
    .output(zPolicyView)
    .mutation(({ ctx, input }) => createPolicy(ctx.deps, ctx.operator, input)),

  update: adminProcedure
    .input(zPolicyUpdate)
    .output(zPolicyView)
    .mutation(({ ctx, input: { policyId, ...changes } }) => updatePolicy(ctx.deps, ctx.operator, policyId, changes)),

  delete: adminProcedure
    .input(z.object({ policyId: zId("pol") }))
    .output(z.object({ policyId: z.string(), deleted: z.literal(true) }))
    .mutation(({ ctx, input }) => deletePolicy(ctx.deps, ctx.operator, input.policyId)),

  /** A dry run: which rule this call would hit, and why. Nothing is recorded. */
  evaluate: operatorProcedure
    .input(zDryRunInput)
    .output(zDryRunResult)
    .query(({ ctx, input }) => dryRunPolicies(ctx.deps, ctx.operator.workspaceId, input)),

  /** What a new or changed rule would have done to the last N approvals. Nothing is recorded. */
  simulate: operatorProcedure
    .input(zSimulationInput)
    .output(zSimulationResult)
    .query(({ ctx, input }) => simulatePolicyChange(ctx.deps, ctx.operator.workspaceId, input)),

  /**
   * Pins an MCP tool an admin has vetted: the agent (the MCP server's name, as
   * tollgate-mcp asks under it) and the tool as the server lists it. Rules with
   * `pinned: true` match its calls only while the server's definition is this one.
   */
  pinTool: adminProcedure
    .input(z.object({ agent: zCallName, definition: zToolDefinition }))
    .output(zToolPinView)
    .mutation(({ ctx, input }) => pinTool(ctx.deps, ctx.operator, input.agent, input.definition)),

  /**
   * Pins the tool a call through tollgate-mcp came with, as its server listed
   * it at the call (kept on the approval), for the agent that asked. `sha256`
   * is the hash the admin was shown: another is CONFLICT, and nothing is pinned.
   */
  pinToolFromApproval: adminProcedure
    .input(z.object({ approvalId: zId("apr"), sha256: z.string().regex(/^[0-9a-f]{64}$/, "a hex SHA-256 (64 characters)") }))
    .output(zToolPinView)
    .mutation(({ ctx, input }) => pinToolFromApproval(ctx.deps, ctx.operator, input.approvalId, input.sha256)),

  pins: operatorProcedure
    .output(z.object({ items: z.array(zToolPinView) }))
    .query(async ({ ctx }) => ({ items: await listToolPins(ctx.deps, ctx.operator.workspaceId) })),

  unpinTool: adminProcedure
    .input(z.object({ pinId: zId("pin") }))
    .output(z.object({ pinId: z.string(), deleted: z.literal(true) }))
    .mutation(({ ctx, input }) => unpinTool(ctx.deps, ctx.operator, input.pinId)),

  /** The workspace default gate: applies when no rule matches. */
  defaults: operatorProcedure.output(zWorkspaceGate).query(({ ctx }) => workspaceGate(ctx.deps, ctx.operator.workspaceId)),

  setDefaults: adminProcedure
    .input(zWorkspaceGate)
    .output(zWorkspaceGate)
    .mutation(({ ctx, input }) => setWorkspaceGate(ctx.deps, ctx.operator, input)),
});
