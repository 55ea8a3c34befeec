// Workspace administration for admins: operators and agent keys.
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { TRUST_LIMITS } from "../../domain/authority.ts";
import { createAgentKey } from "../../services/agent-keys/create-agent-key.ts";
import { listAgentKeys } from "../../services/agent-keys/list-agent-keys.ts";
import { revokeAgentKey } from "../../services/agent-keys/revoke-agent-key.ts";
import { setAgentKeyTrust } from "../../services/agent-keys/set-agent-key-trust.ts";
import { listOperators, setOperatorGroups } from "../../services/operators.ts";
import { invitePerson, listInvitations, revokeInvitation } from "../../services/people/invite-person.ts";
import { resetOperatorPassword, setOperatorDisabled, setOperatorRole } from "../../services/people/change-operator.ts";
import { zId, zName } from "../schemas.ts";
import { adminProcedure, operatorProcedure, router } from "../trpc.ts";

const zRole = z.enum(["ADMIN", "OPERATOR", "VIEWER"]);
const zInvitation = z.object({ invitationId: z.string(), email: z.string(), name: z.string(), role: zRole, createdAt: z.string(), expiresAt: z.string() });
const zSentInvitation = zInvitation.extend({ emailed: z.boolean(), link: z.string().nullable(), emailError: z.string().nullable() });

/** Admins and operators; viewers do not see the workspace's keys. */
const adminOrOperatorProcedure = operatorProcedure.use(({ ctx, next }) => {
  if (ctx.operator.role !== "ADMIN" && ctx.operator.role !== "OPERATOR") {
    throw new TRPCError({ code: "FORBIDDEN", message: `only admins and operators may do this; ${ctx.operator.email} is ${ctx.operator.role}` });
  }
  return next();
});

const zTrustGlob = z
  .string()
  .trim()
  .min(1, "must be an agent-name glob such as \"billing-*\", not empty")
  .max(TRUST_LIMITS.globChars, `must be at most ${TRUST_LIMITS.globChars} characters`);

export const operatorRouter = router({
  list: operatorProcedure.query(async ({ ctx }) => ({ items: await listOperators(ctx.deps, ctx.operator.workspaceId) })),

  /**
   * Invites a person: emailed when the server has SMTP, else the link comes
   * back (once) for the admin to hand on. The answer is the same whether or
   * not the address has an account; they join by accepting
   * (auth.acceptInvitation).
   */
  create: adminProcedure
    .input(z.strictObject({ email: z.email().max(320), name: zName, role: zRole }))
    .output(zSentInvitation)
    .mutation(({ ctx, input }) => invitePerson(ctx.deps, ctx.operator, input)),

  /** Invitations not yet accepted or withdrawn (expired ones too, by their date). */
  invitations: adminProcedure
    .output(z.object({ items: z.array(zInvitation) }))
    .query(async ({ ctx }) => ({ items: await listInvitations(ctx.deps, ctx.operator.workspaceId) })),

  /** Withdraws an invitation: its link stops working. */
  revokeInvitation: adminProcedure
    .input(z.object({ invitationId: zId("inv") }))
    .output(z.object({ invitationId: z.string() }))
    .mutation(({ ctx, input }) => revokeInvitation(ctx.deps, ctx.operator, input.invitationId)),

  /** Changes an operator's role at once (their next call runs with it); the workspace keeps an enabled admin. */
  setRole: adminProcedure
    .input(z.object({ operatorId: zId("op"), role: z.enum(["ADMIN", "OPERATOR", "VIEWER"]) }))
    .mutation(({ ctx, input }) => setOperatorRole(ctx.deps, ctx.operator, input.operatorId, input.role)),

  /** Disabling ends every session and token of theirs at once, sockets included; enabling lets them sign in again. */
  setDisabled: adminProcedure
    .input(z.object({ operatorId: zId("op"), disabled: z.boolean() }))
    .mutation(({ ctx, input }) => setOperatorDisabled(ctx.deps, ctx.operator, input.operatorId, input.disabled)),

  /** Sets a new password; every session and token of theirs ends. */
  resetPassword: adminProcedure
    .input(z.object({ operatorId: zId("op"), password: z.string().min(8, "must be at least 8 characters").max(1024) }))
    .mutation(({ ctx, input }) => resetOperatorPassword(ctx.deps, ctx.operator, input.operatorId, input.password)),

  /** Replaces an operator's groups: approvals routed to a group ask its members. */
  setGroups: adminProcedure
    .input(
      z.object({
        operatorId: zId("op"),
        groups: z.array(z.string().trim().min(1, "a group name cannot be empty").max(100).regex(/^[\w.-]+$/, "must be letters, digits, '.', '_' or '-'")).max(20),
      }),
    )
    .mutation(({ ctx, input }) => setOperatorGroups(ctx.deps, ctx.operator, input.operatorId, input.groups)),
});

export const agentKeyRouter = router({
  create: adminProcedure.input(z.object({ name: zName })).mutation(({ ctx, input }) => createAgentKey(ctx.deps, ctx.operator, input.name)),
  revoke: adminProcedure.input(z.object({ keyId: zId("key") })).mutation(({ ctx, input }) => revokeAgentKey(ctx.deps, ctx.operator, input.keyId)),

  list: adminOrOperatorProcedure
    .output(
      z.object({
        items: z.array(
          z.object({
            id: z.string(),
            name: z.string(),
            keyPrefix: z.string(),
            createdAt: z.string(),
            lastUsedAt: z.string().nullable(),
            revokedAt: z.string().nullable(),
            trustedAgents: z.array(z.string()),
          }),
        ),
      }),
    )
    .query(async ({ ctx }) => ({ items: await listAgentKeys(ctx.deps, ctx.operator.workspaceId) })),

  /** Replaces the agent-name globs whose requests and tasks this key may act on besides its own. */
  setTrust: adminProcedure
    .input(
      z.object({
        keyId: zId("key"),
        trustedAgents: z.array(zTrustGlob).max(TRUST_LIMITS.globs, `at most ${TRUST_LIMITS.globs} globs per key`),
      }),
    )
    .output(z.object({ id: z.string(), trustedAgents: z.array(z.string()) }))
    .mutation(({ ctx, input }) => setAgentKeyTrust(ctx.deps, ctx.operator, input.keyId, input.trustedAgents)),
});
