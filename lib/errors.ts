// Reading tRPC errors in the console: codes, not-found detection, and the
// "already decided" details the server attaches to a CONFLICT.
import { TRPCClientError } from "@trpc/client";

export interface ErrorShapeData {
  code?: string;
  httpStatus?: number;
  details?: Record<string, unknown> | null;
}

export function errorCode(error: unknown): string | undefined {
  if (error instanceof TRPCClientError) return (error.data as ErrorShapeData | undefined)?.code;
  if (error && typeof error === "object" && "code" in error) return String((error as { code: unknown }).code);
  return undefined;
}

/** An id in the URL that does not exist (or is not even a well-formed id). */
export function isNotFound(error: unknown): boolean {
  const code = errorCode(error);
  return code === "NOT_FOUND" || code === "BAD_REQUEST";
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

export interface AlreadyDecided {
  status?: string;
  decidedBy: string;
  decidedAt?: string;
  action?: string;
}

/** The CONFLICT of a late decision: who decided what, and when. */
export function alreadyDecided(error: unknown): AlreadyDecided | null {
  if (!(error instanceof TRPCClientError)) return null;
  const data = error.data as ErrorShapeData | undefined;
  if (data?.code !== "CONFLICT") return null;
  const details = data.details ?? {};
  if (typeof details.decidedBy === "string") {
    return {
      decidedBy: details.decidedBy,
      decidedAt: typeof details.decidedAt === "string" ? details.decidedAt : undefined,
      action: typeof details.action === "string" ? details.action : undefined,
      status: typeof details.status === "string" ? details.status : undefined,
    };
  }
  // Older servers: read it from the message ("... was already approved by a@b at <iso>; ...").
  const match = /already (.+?) by (\S+) at (\S+?);/.exec(error.message);
  if (match) return { decidedBy: match[2]!, decidedAt: match[3], action: match[1] };
  return null;
}

/** Whether this operator made (or, with a quorum, took part in) the decision the server returned. */
export function decidedByMe(result: { decision?: { decidedBy: string }; approvals?: { decidedBy: string }[] }, email: string): boolean {
  return Boolean(result.approvals?.some((vote) => vote.decidedBy === email)) || result.decision?.decidedBy === email;
}
