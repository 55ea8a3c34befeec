// The tRPC base: context, error mapping and the procedure kinds (public,
// operator, decider, admin, agent). Transport only: no Prisma here.
import { getTRPCErrorFromUnknown, initTRPC, TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import { ZodError } from "zod";
import { DomainError, type DomainErrorCode } from "../domain/errors.ts";
import { canDecide, type AgentPrincipal, type OperatorPrincipal } from "../domain/principal.ts";
import { authenticateAgent, authenticateOperator } from "../services/auth.ts";
import type { ServiceDeps } from "../services/deps.ts";
import { failed, inCallSpan, noteCaller, tracingEnabled } from "../observability/tracing.ts";

export const SESSION_COOKIE = "tollgate_session";
/** Names a browser that signed into an account, so guesses from elsewhere do not hold its logins back (login-throttle.ts). */
export const DEVICE_COOKIE = "tollgate_device";
export const DEVICE_COOKIE_DAYS = 180;

export interface TrpcContext {
  deps: ServiceDeps;
  /** The token from `Authorization: Bearer ...`, if any. */
  bearerToken?: string;
  /** The operator session token from the cookie, if any. */
  sessionToken?: string;
  /** The client's network address (the socket's, or the last proxy hop when proxies are trusted). */
  clientAddress?: string;
  /** The caller's W3C trace context, when it sent a valid `traceparent` header. */
  traceparent?: string;
  /** The device cookie of a browser that signed in before, if any. */
  deviceCookie?: string;
  /** Sets the device cookie on the response (absent under createCaller). */
  setDeviceCookie?: (value: string) => void;
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
  TOO_MANY_REQUESTS: "TOO_MANY_REQUESTS",
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
    // An unexpected failure's own message names files and queries: it stays in the server log.
    const message = zodIssues
      ? `invalid input: ${describeZodError(error.cause as ZodError)}`
      : error.code === "INTERNAL_SERVER_ERROR"
        ? "Tollgate could not complete this request because of an internal error; it has been logged"
        : shape.message;
    return {
      ...shape,
      message,
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

// Database refusals of values that passed validation (too long, out of range,
// text PostgreSQL cannot store): the caller's input was wrong, not the server.
const DATABASE_INPUT_ERRORS = /\b(P2000|P2020|P2033|22001|22003|22021|22P02|22P05)\b|out of range|invalid byte sequence|unsupported Unicode escape|Maximum call stack size exceeded/;

function describeDatabaseInputError(error: unknown): string | null {
  const text = error instanceof Error ? `${error.message} ${(error as { code?: string }).code ?? ""} ${JSON.stringify((error as { meta?: unknown }).meta ?? "")}` : "";
  if (!DATABASE_INPUT_ERRORS.test(text)) return null;
  if (/Maximum call stack/.test(text)) return "the input is nested too deeply";
  if (/22021|22P05|unsupported Unicode escape|invalid byte sequence/.test(text)) return "text in the input contains a character that cannot be stored (such as \\u0000)";
  return "a value in the input is out of the range or length that can be stored";
}

/** A failed call's error with the code its DomainError maps to, or a database refusal of its input as BAD_REQUEST; null to keep it as it is. */
function mappedError(error: TRPCError): TRPCError | null {
  const cause = error.cause;
  if (cause instanceof DomainError) return new TRPCError({ code: domainToTrpcCode[cause.code], message: cause.message, cause });
  if (error.code === "INTERNAL_SERVER_ERROR") {
    const inputProblem = describeDatabaseInputError(cause);
    if (inputProblem) return new TRPCError({ code: "BAD_REQUEST", message: `invalid input: ${inputProblem}`, cause });
  }
  return null;
}

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What makes a string unstorable or not Unicode, if anything. */
function textProblem(text: string): string | null {
  if (text.includes("\0")) return "contains a NUL character (\\u0000), which cannot be stored";
  if (LONE_SURROGATE.test(text)) return "contains a lone UTF-16 surrogate, which is not valid Unicode";
  return null;
}

/** Where in an input a value is, as zod names it ("input" for the whole). */
const fieldPath = (path: readonly (string | number)[]) => (path.length ? path.join(".") : "input");

/** The path and problem of the first bad string (key or value) in a JSON input. */
function findInvalidText(value: unknown, path: (string | number)[]): string | null {
  if (typeof value === "string") {
    const problem = textProblem(value);
    return problem ? `${fieldPath(path)} ${problem}` : null;
  }
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = findInvalidText(value[index], [...path, index]);
      if (found) return found;
    }
    return null;
  }
  if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      const keyProblem = textProblem(key);
      if (keyProblem) return `a key in ${fieldPath(path)} ${keyProblem}`;
      const found = findInvalidText(item, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}

// JSON.stringify writes NUL and lone surrogates as \u escapes: a cheap test
// before the walk, which rules out text that merely spells such an escape.
const SUSPECT_ESCAPE = /\\u(?:0000|d[89a-f][0-9a-f]{2})/i;

/**
 * Refuses NUL (PostgreSQL cannot store it in text or JSON) and lone UTF-16
 * surrogates (not Unicode) anywhere in a call's input, naming where.
 */
async function refuseInvalidText(getRawInput: () => Promise<unknown>): Promise<void> {
  const raw = await getRawInput().catch(() => undefined);
  if (raw !== undefined && SUSPECT_ESCAPE.test(JSON.stringify(raw))) {
    const found = findInvalidText(raw, []);
    if (found) throw new TRPCError({ code: "BAD_REQUEST", message: `invalid input: ${found}` });
  }
}

/**
 * What every call goes through before its input is parsed, in this order: its
 * span when tracing is on (continuing the agent's trace, see
 * observability/tracing.ts), the refusal of text that cannot be stored, the
 * caller's admission (`admit` returns what it adds to the context, or throws),
 * and the mapping of domain errors to tRPC's codes. One middleware, not one
 * each: tRPC copies a call's options at every middleware of its chain, which
 * was the largest part of tRPC's cost in a hot call.
 */
function guardedBy<Added extends object>(admit: (ctx: TrpcContext) => Promise<Added>) {
  return t.middleware(({ ctx, path, type, getRawInput, next }) => {
    const guarded = async () => {
      let added: Added;
      try {
        await refuseInvalidText(getRawInput);
        added = await admit(ctx);
      } catch (cause) {
        throw mappedError(getTRPCErrorFromUnknown(cause)) ?? cause;
      }
      // The rest of the chain (input, resolver, output) answers failures as results; it does not throw.
      const result = await next({ ctx: added });
      if (!result.ok) {
        const mapped = mappedError(result.error);
        if (mapped) throw mapped;
      }
      return result;
    };
    if (!tracingEnabled()) return guarded();
    return inCallSpan(path, ctx.traceparent, { "rpc.system": "trpc", "rpc.method": path, "tollgate.call_type": type }, async (span) => {
      try {
        const result = await guarded();
        if (!result.ok) failed(span, result.error.message, result.error.code);
        return result;
      } catch (cause) {
        const error = getTRPCErrorFromUnknown(cause);
        failed(span, error.message, error.code);
        throw cause;
      }
    });
  });
}

async function operatorOf(ctx: TrpcContext): Promise<OperatorPrincipal> {
  const token = ctx.bearerToken ?? ctx.sessionToken;
  const operator: OperatorPrincipal | null = token ? await authenticateOperator(ctx.deps, token) : null;
  if (!operator) {
    throw new TRPCError({
      code: "UNAUTHORIZED",
      message: token ? "your session has expired or was revoked; log in again" : "log in first: this needs an operator session",
    });
  }
  noteCaller({ "tollgate.workspace_id": operator.workspaceId, "tollgate.caller": "operator", "tollgate.operator_id": operator.operatorId });
  return operator;
}

export const publicProcedure = t.procedure.use(guardedBy(async () => ({})));

export const operatorProcedure = t.procedure.use(guardedBy(async (ctx) => ({ operator: await operatorOf(ctx) })));

/** Operators who may decide approvals (not viewers). */
export const deciderProcedure = t.procedure.use(
  guardedBy(async (ctx) => {
    const operator = await operatorOf(ctx);
    if (!canDecide(operator.role)) {
      throw new TRPCError({ code: "FORBIDDEN", message: `${operator.email} has the ${operator.role} role, which may not decide approvals` });
    }
    return { operator };
  }),
);

export const adminProcedure = t.procedure.use(
  guardedBy(async (ctx) => {
    const operator = await operatorOf(ctx);
    if (operator.role !== "ADMIN") throw new TRPCError({ code: "FORBIDDEN", message: `only admins may do this; ${operator.email} is ${operator.role}` });
    return { operator };
  }),
);

export const agentProcedure = t.procedure.use(
  guardedBy(async (ctx) => {
    const agent: AgentPrincipal | null = ctx.bearerToken ? await authenticateAgent(ctx.deps, ctx.bearerToken) : null;
    if (!agent) {
      throw new TRPCError({
        code: "UNAUTHORIZED",
        message: ctx.bearerToken ? "the agent key is unknown or revoked" : "send the agent key as `Authorization: Bearer <key>`",
      });
    }
    noteCaller({ "tollgate.workspace_id": agent.workspaceId, "tollgate.caller": "agent", "tollgate.agent_key_id": agent.agentKeyId });
    return { agent };
  }),
);
