// The tRPC base: context, error mapping and the procedure kinds (public,
// operator, decider, admin, agent). Transport only: no Prisma here.
import { initTRPC, TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import { ZodError } from "zod";
import { DomainError, type DomainErrorCode } from "../domain/errors.ts";
import { canDecide, type AgentPrincipal, type OperatorPrincipal } from "../domain/principal.ts";
import { authenticateAgent, authenticateOperator } from "../services/auth.ts";
import type { ServiceDeps } from "../services/deps.ts";

export const SESSION_COOKIE = "tollgate_session";

export interface TrpcContext {
  deps: ServiceDeps;
  /** The token from `Authorization: Bearer ...`, if any. */
  bearerToken?: string;
  /** The operator session token from the cookie, if any. */
  sessionToken?: string;
  /** Sets or clears the session cookie on the response (absent under createCaller). */
  setSessionCookie?: (token: string | null, expiresAt?: Date) => void;
}

const domainToTrpcCode: Record<DomainErrorCode, TRPC_ERROR_CODE_KEY> = {
  BAD_INPUT: "BAD_REQUEST",
  UNAUTHORIZED: "UNAUTHORIZED",
  FORBIDDEN: "FORBIDDEN",
  NOT_FOUND: "NOT_FOUND",
  CONFLICT: "CONFLICT",
  PRECONDITION_FAILED: "PRECONDITION_FAILED",
  INVALID_TRANSITION: "CONFLICT",
  PAYLOAD_TOO_LARGE: "PAYLOAD_TOO_LARGE",
};

function describeZodError(error: ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length ? issue.path.join(".") : "input"}: ${issue.message}`)
    .join("; ");
}

const t = initTRPC.context<TrpcContext>().create({
  errorFormatter({ shape, error }) {
    const zodIssues = error.cause instanceof ZodError ? error.cause.issues : null;
    const domain = error.cause instanceof DomainError ? error.cause : null;
    return {
      ...shape,
      message: zodIssues ? `invalid input: ${describeZodError(error.cause as ZodError)}` : shape.message,
      data: {
        ...shape.data,
        // Stack traces stay in the server log.
        stack: undefined,
        zodIssues,
        domainCode: domain?.code ?? null,
        details: domain?.details ?? null,
      },
    };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/** Turns DomainErrors thrown by services into tRPC errors with the mapped code. */
const mapDomainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof DomainError) {
    const cause = result.error.cause;
    throw new TRPCError({ code: domainToTrpcCode[cause.code], message: cause.message, cause });
  }
  return result;
});

export const publicProcedure = t.procedure.use(mapDomainErrors);

export const operatorProcedure = publicProcedure.use(async ({ ctx, next }) => {
  const token = ctx.bearerToken ?? ctx.sessionToken;
  const operator: OperatorPrincipal | null = token ? await authenticateOperator(ctx.deps, token) : null;
  if (!operator) {
    throw new TRPCError({
      code: "UNAUTHORIZED",
      message: token ? "your session has expired or was revoked; log in again" : "log in first: this needs an operator session",
    });
  }
  return next({ ctx: { ...ctx, operator } });
});

/** Operators who may decide approvals (not viewers). */
export const deciderProcedure = operatorProcedure.use(({ ctx, next }) => {
  if (!canDecide(ctx.operator.role)) {
    throw new TRPCError({
      code: "FORBIDDEN",
      message: `${ctx.operator.email} has the ${ctx.operator.role} role, which may not decide approvals`,
    });
  }
  return next();
});

export const adminProcedure = operatorProcedure.use(({ ctx, next }) => {
  if (ctx.operator.role !== "ADMIN") {
    throw new TRPCError({ code: "FORBIDDEN", message: `only admins may do this; ${ctx.operator.email} is ${ctx.operator.role}` });
  }
  return next();
});

export const agentProcedure = publicProcedure.use(async ({ ctx, next }) => {
  const agent: AgentPrincipal | null = ctx.bearerToken ? await authenticateAgent(ctx.deps, ctx.bearerToken) : null;
  if (!agent) {
    throw new TRPCError({
      code: "UNAUTHORIZED",
      message: ctx.bearerToken
        ? "the agent key is unknown or revoked"
        : "send the agent key as `Authorization: Bearer <key>`",
    });
  }
  return next({ ctx: { ...ctx, agent } });
});
