// What the HTTP server checks and adds for browsers' sake: the client's
// address and scheme behind proxies, which API requests a browser may make
// with the session cookie, and the security headers of every response.
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import { parse as parseCookie } from "cookie";

export interface ProxyTrust {
  /** Believe X-Forwarded-For and X-Forwarded-Proto (only behind a proxy that sets them). */
  trustProxy: boolean;
}

function lastHop(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header.join(",") : header;
  // The last hop is the one our own proxy appended; earlier ones are the client's say.
  const hop = value?.split(",").at(-1)?.trim();
  return hop ? hop : undefined;
}

/** The address the request came from: the socket's, or the last X-Forwarded-For hop when proxies are trusted. */
export function clientAddress(req: IncomingMessage, { trustProxy }: ProxyTrust): string | undefined {
  const socketAddress = req.socket.remoteAddress?.replace(/^::ffff:/, "");
  if (!trustProxy) return socketAddress;
  return lastHop(req.headers["x-forwarded-for"]) ?? socketAddress;
}

/** Whether the browser reached us over HTTPS (directly, or through a trusted proxy that says so). */
export function requestIsHttps(req: IncomingMessage, { trustProxy }: ProxyTrust): boolean {
  if ((req.socket as TLSSocket).encrypted) return true;
  return trustProxy && lastHop(req.headers["x-forwarded-proto"])?.toLowerCase() === "https";
}

export interface Refusal {
  status: number;
  code: string;
  message: string;
}

export interface MutationCheckOptions extends ProxyTrust {
  sessionCookie: string;
  /** Another origin the console is served at (TOLLGATE_PUBLIC_URL). */
  publicOrigin?: string;
}

const BATCH_FORBIDDEN = ["auth.login"];

function ownOrigins(req: IncomingMessage, options: MutationCheckOptions): Set<string> {
  const scheme = requestIsHttps(req, options) ? "https" : "http";
  const origins = new Set<string>();
  if (req.headers.host) origins.add(`${scheme}://${req.headers.host.toLowerCase()}`);
  const forwardedHost = options.trustProxy ? lastHop(req.headers["x-forwarded-host"]) : undefined;
  if (forwardedHost) origins.add(`${scheme}://${forwardedHost.toLowerCase()}`);
  if (options.publicOrigin) origins.add(options.publicOrigin);
  return origins;
}

/**
 * The checks of a tRPC request before any procedure runs. Mutations (every
 * POST) must be JSON: HTML forms cannot send it, and other bodies would be
 * read as no input. A request that carries the session cookie must come from
 * the console's own pages; bearer-token calls come from services, which send
 * no Origin.
 */
export function refuseTrpcRequest(req: IncomingMessage, procedures: string[], batch: boolean, options: MutationCheckOptions): Refusal | null {
  if (batch) {
    const forbidden = procedures.find((procedure) => BATCH_FORBIDDEN.includes(procedure));
    if (forbidden) {
      return { status: 400, code: "BAD_REQUEST", message: `${forbidden} cannot be called in a batch; call it on its own` };
    }
  }
  if (req.method !== "POST") return null;

  const contentType = req.headers["content-type"]?.split(";")[0]?.trim().toLowerCase();
  if (contentType !== "application/json") {
    return {
      status: 415,
      code: "UNSUPPORTED_MEDIA_TYPE",
      message: `mutations take a JSON body: send content-type: application/json${contentType ? ` (not ${contentType})` : ""}`,
    };
  }

  if (/^Bearer\s/i.test(req.headers.authorization ?? "")) return null;
  const origin = req.headers.origin;
  const hasSession = req.headers.cookie ? parseCookie(req.headers.cookie)[options.sessionCookie] !== undefined : false;
  const sameOrigin = origin !== undefined ? ownOrigins(req, options).has(origin.toLowerCase()) : req.headers["sec-fetch-site"] === "same-origin";
  if (hasSession && !sameOrigin) {
    return {
      status: 403,
      code: "FORBIDDEN",
      message: origin
        ? `a call with the session cookie must come from the console's own origin, not ${origin}`
        : "a call with the session cookie must send the console's origin in the Origin header (scripts: use a bearer token)",
    };
  }
  // Without a session: a browser on another site may not log its visitor in.
  if (!hasSession && origin !== undefined && !sameOrigin) {
    return { status: 403, code: "FORBIDDEN", message: `calls from another origin (${origin}) need a bearer token` };
  }
  return null;
}

export const newNonce = () => randomBytes(16).toString("base64");

/**
 * The policy of the console's pages. Scripts run only with this response's
 * nonce (and what they load); no page may frame the console.
 */
export function contentSecurityPolicy(nonce: string, dev = false): string {
  return [
    "default-src 'self'",
    // React's development build evaluates code; the production build does not.
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    // style attributes are set by React; they cannot run code.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

const FRAMING_AND_SNIFFING = {
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "strict-origin-when-cross-origin",
} as const;

/** The headers of a console page, with its policy for this response's nonce. */
export function consoleSecurityHeaders(nonce: string, dev = false): Record<string, string> {
  return { "content-security-policy": contentSecurityPolicy(nonce, dev), ...FRAMING_AND_SNIFFING };
}

/**
 * The headers of every other response (the API, the socket, health and keys):
 * JSON, never a page, so its policy allows no content at all, and needs no
 * nonce (which would cost random bytes on every call).
 */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  ...FRAMING_AND_SNIFFING,
});
