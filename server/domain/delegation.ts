// Delegation of a request to another agent key: the key that may act on a
// request mints a short-lived token naming it, and hands it to the agent it
// calls, which names the request as its parentRequestId with the token. The
// token is an HMAC over (workspace, request, expiry) with a key derived from
// the server's secret: nothing of it is stored, every node checks it alone,
// and it cannot be stretched to another request, workspace or time.
import { createHmac, timingSafeEqual } from "node:crypto";

export const DELEGATION_PREFIX = "tgd_";
/** The token's shape, for input validation (the transport refuses anything else with a 400). */
export const DELEGATION_PATTERN = /^tgd_[A-Za-z0-9_-]{1,200}\.[A-Za-z0-9_-]{43}$/;
export const DELEGATION_TTL = { defaultSeconds: 15 * 60, maxSeconds: 24 * 60 * 60 } as const;

export interface DelegationClaims {
  workspaceId: string;
  requestId: string;
  expiresAt: Date;
}

function mac(key: Buffer, body: string): Buffer {
  return createHmac("sha256", key).update(`tollgate delegation v1\n${body}`).digest();
}

export function mintDelegation(key: Buffer, claims: DelegationClaims): string {
  const body = Buffer.from(JSON.stringify({ ws: claims.workspaceId, req: claims.requestId, exp: Math.floor(claims.expiresAt.getTime() / 1000) })).toString("base64url");
  return `${DELEGATION_PREFIX}${body}.${mac(key, body).toString("base64url")}`;
}

/** Whether the token delegates `requestId` of `workspaceId` and is still valid at `now`. */
export function delegationAllows(key: Buffer, token: string, target: { workspaceId: string; requestId: string }, now: Date): boolean {
  if (!DELEGATION_PATTERN.test(token)) return false;
  const [body, signature] = token.slice(DELEGATION_PREFIX.length).split(".") as [string, string];
  const given = Buffer.from(signature, "base64url");
  const expected = mac(key, body);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
  let claims: { ws?: unknown; req?: unknown; exp?: unknown };
  try {
    claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  } catch {
    return false;
  }
  return claims.ws === target.workspaceId && claims.req === target.requestId && typeof claims.exp === "number" && claims.exp * 1000 > now.getTime();
}
