// Operator login, logout, the current operator, and script tokens.
import { z } from "zod";
import { issueOperatorToken, login, logout } from "../../services/auth.ts";
import { operatorProcedure, publicProcedure, router } from "../trpc.ts";

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
      const result = await login(ctx.deps, input.email, input.password, { address: ctx.clientAddress });
      ctx.setSessionCookie?.(result.token, result.expiresAt);
      return { operator: result.operator, expiresAt: result.expiresAt.toISOString() };
    }),

  logout: operatorProcedure.output(z.object({ ok: z.literal(true) })).mutation(async ({ ctx }) => {
    await logout(ctx.deps, ctx.operator);
    ctx.setSessionCookie?.(null);
    return { ok: true as const };
  }),

  me: operatorProcedure.output(z.object({ operator: zOperator })).query(({ ctx }) => ({
    operator: { id: ctx.operator.operatorId, email: ctx.operator.email, name: ctx.operator.name, role: ctx.operator.role },
  })),

  /** A bearer token for scripts; shown once. */
  createToken: operatorProcedure
    .input(z.object({ ttlHours: z.number().int().min(1).max(24 * 365).default(24 * 30) }))
    .output(z.object({ token: z.string(), expiresAt: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const issued = await issueOperatorToken(ctx.deps, ctx.operator, input.ttlHours);
      return { token: issued.token, expiresAt: issued.expiresAt.toISOString() };
    }),
});
