// Operator login, logout, the current operator, and script tokens.
import { z } from "zod";
import { login, logout } from "../../services/auth.ts";
import { acceptInvitation, readInvitation } from "../../services/people/accept-invitation.ts";
import { createToken } from "../../services/tokens/create-token.ts";
import { listTokens } from "../../services/tokens/list-tokens.ts";
import { revokeToken } from "../../services/tokens/revoke-token.ts";
import { changeOwnPassword } from "../../services/people/change-own-password.ts";
import { setTokenLimit, tokenLimit } from "../../services/tokens/token-limit.ts";
import { switchWorkspace } from "../../services/workspaces/switch-workspace.ts";
import { zId } from "../schemas.ts";
import { adminProcedure, operatorProcedure, publicProcedure, router } from "../trpc.ts";

const zInvitationToken = z.string().regex(/^tgi_[A-Za-z0-9_-]{32}$/, "must be the token of an invitation link (after #)");

const zOperator = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  role: z.enum(["ADMIN", "OPERATOR", "VIEWER"]),
});

export const authRouter = router({
  login: publicProcedure
    .input(z.object({ email: z.string().trim().min(1).max(320), password: z.string().min(1).max(1024) }))
    .output(z.object({ operator: zOperator, expiresAt: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const result = await login(ctx.deps, input.email, input.password, { address: ctx.clientAddress, device: ctx.deviceCookie });
      ctx.setSessionCookie?.(result.token, result.expiresAt);
      ctx.setDeviceCookie?.(result.device);
      return { operator: result.operator, expiresAt: result.expiresAt.toISOString() };
    }),

  /** What an invitation's link is for (the accept page); NOT_FOUND once used, withdrawn or expired. */
  invitation: publicProcedure
    .input(z.object({ token: zInvitationToken }))
    .output(z.object({ workspaceName: z.string(), email: z.string(), name: z.string(), role: z.enum(["ADMIN", "OPERATOR", "VIEWER"]), expiresAt: z.string() }))
    .query(({ ctx, input }) => readInvitation(ctx.deps, input.token)),

  /**
   * Accepts an invitation: with the password of the email's Tollgate account
   * if it has one, else with the password the person chooses for a new one;
   * signs them in to the workspace.
   */
  acceptInvitation: publicProcedure
    .input(z.object({ token: zInvitationToken, password: z.string().min(1).max(1024) }))
    .output(z.object({ operator: zOperator, workspace: z.object({ id: z.string(), name: z.string() }), expiresAt: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const result = await acceptInvitation(ctx.deps, input, { address: ctx.clientAddress, device: ctx.deviceCookie });
      ctx.setSessionCookie?.(result.token, result.expiresAt);
      ctx.setDeviceCookie?.(result.device);
      return { operator: result.operator, workspace: result.workspace, expiresAt: result.expiresAt.toISOString() };
    }),

  logout: operatorProcedure.output(z.object({ ok: z.literal(true) })).mutation(async ({ ctx }) => {
    await logout(ctx.deps, ctx.operator);
    ctx.setSessionCookie?.(null);
    return { ok: true as const };
  }),

  me: operatorProcedure.output(z.object({ operator: zOperator })).query(({ ctx }) => ({
    operator: { id: ctx.operator.operatorId, email: ctx.operator.email, name: ctx.operator.name, role: ctx.operator.role },
  })),

  /** Moves this browser session to another of the caller's workspaces; the old session ends. */
  switchWorkspace: operatorProcedure
    .input(z.object({ workspaceId: zId("ws") }))
    .output(z.object({ operator: zOperator, workspace: z.object({ id: z.string(), name: z.string() }), expiresAt: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const result = await switchWorkspace(ctx.deps, ctx.operator, input.workspaceId);
      ctx.setSessionCookie?.(result.token, result.expiresAt);
      return { operator: result.operator, workspace: result.workspace, expiresAt: result.expiresAt.toISOString() };
    }),

  /** Changes the caller's own password (it opens all their workspaces); their other sessions and tokens end. */
  changePassword: operatorProcedure
    .input(
      z.object({
        currentPassword: z.string().min(1, "enter your current password").max(1024),
        newPassword: z.string().min(8, "must be at least 8 characters").max(1024),
      }),
    )
    .output(z.object({ sessionsEnded: z.number() }))
    .mutation(({ ctx, input }) => changeOwnPassword(ctx.deps, ctx.operator, input, { address: ctx.clientAddress })),

  /** A bearer token for scripts: needs the password again, named, capped by the workspace, shown once. */
  createToken: operatorProcedure
    .input(
      z.object({
        name: z.string().trim().min(1, "name the token (what uses it)").max(100).default("script"),
        ttlHours: z.number().int().min(1).max(24 * 365).optional(),
        password: z.string().min(1, "enter your password again to mint a token").max(1024),
      }),
    )
    .output(z.object({ id: z.string(), name: z.string(), token: z.string(), expiresAt: z.string() }))
    .mutation(({ ctx, input }) => createToken(ctx.deps, ctx.operator, input, { address: ctx.clientAddress })),

  /** The caller's tokens; `everyone` (admins): every operator's in the workspace. */
  tokens: operatorProcedure
    .input(z.object({ everyone: z.boolean().default(false) }).default({ everyone: false }))
    .query(({ ctx, input }) => listTokens(ctx.deps, ctx.operator, input)),

  revokeToken: operatorProcedure
    .input(z.object({ tokenId: zId("ops") }))
    .mutation(({ ctx, input }) => revokeToken(ctx.deps, ctx.operator, input.tokenId)),

  tokenLimit: operatorProcedure.query(({ ctx }) => tokenLimit(ctx.deps, ctx.operator.workspaceId)),

  setTokenLimit: adminProcedure
    .input(z.object({ maxTokenHours: z.number().int().min(1, "at least 1 hour").max(24 * 365, "at most a year (8760 hours)") }))
    .mutation(({ ctx, input }) => setTokenLimit(ctx.deps, ctx.operator, input.maxTokenHours)),
});
