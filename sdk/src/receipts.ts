// Decision receipts, tool side: checks that a receipt was signed by Tollgate and
// approves exactly this tool with exactly these arguments, before the tool runs.
// Also the one definition of `args_sha256`, which the server signs with.
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { createLocalJWKSet, createRemoteJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTPayload, type JWTVerifyGetKey } from "jose";

/** The `typ` header of every receipt, so no other token signed with these keys passes as one. */
export const RECEIPT_TYPE = "tollgate-receipt+jwt";
/** What the server signs with today (Ed25519); API.md also allows ES256. */
export const RECEIPT_ALGORITHM = "EdDSA";
const ACCEPTED_ALGORITHMS = ["EdDSA", "ES256"];
export const JWKS_PATH = "/.well-known/jwks.json";
/**
 * A receipt key's id: the workspace it signs for, a dot, then the key's RFC
 * 7638 thumbprint (base64url, so without a dot). Keys made before keys were per
 * workspace have the thumbprint alone.
 */
export function receiptKeyId(workspaceId: string, thumbprint: string): string {
  return `${workspaceId}.${thumbprint}`;
}

/** The workspace a key id names; undefined for a server-wide key of before. */
export function workspaceOfKeyId(kid: string): string | undefined {
  const dot = kid.lastIndexOf(".");
  return dot < 0 ? undefined : kid.slice(0, dot);
}

/** A verifier asks the server again for an unknown key id at most this often. */
const DEFAULT_JWKS_COOLDOWN_MS = 5_000;

export interface ReceiptClaims {
  /** The server's public base URL. */
  iss: string;
  /** The approval id. */
  sub: string;
  /** The approval id again, as the token's unique id. */
  jti: string;
  /** The workspace id. */
  ws: string;
  /** The request id the approval belongs to. */
  req: string;
  /** The agent name of the task that asked. */
  agent: string;
  tool: string;
  /** Hex SHA-256 of the approved arguments in RFC 8785 canonical JSON. */
  args_sha256: string;
  /** The operator's email, `policy:<name>`, or who decided a timeout. */
  decided_by: string;
  /** When the decision was made (seconds since the epoch). */
  iat: number;
  exp: number;
}

export type ReceiptErrorCode =
  | "invalid_signature"
  | "expired"
  | "wrong_tool"
  | "wrong_args"
  | "wrong_issuer"
  | "wrong_approval"
  | "wrong_workspace"
  | "malformed";

/** A receipt that does not allow this call; `code` says why. Do not run the tool. */
export class ReceiptError extends Error {
  readonly code: ReceiptErrorCode;

  constructor(code: ReceiptErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ReceiptError";
    this.code = code;
  }
}

/**
 * Hex SHA-256 of the arguments serialised with RFC 8785 JSON Canonicalization:
 * key order and number spelling do not change it, any value change does.
 */
export function argsSha256(args: unknown): string {
  const canonical = canonicalize(args);
  if (canonical === undefined) {
    throw new TypeError(`tool arguments must be a JSON value; ${typeof args} has no canonical JSON form`);
  }
  return createHash("sha256").update(canonical, "utf8").digest("hex");
}

/** What the tool is about to do, which the receipt must allow. */
export interface ReceiptExpectation {
  tool: string;
  /** The arguments the tool will run with (not the ones first proposed). */
  args: unknown;
  /**
   * The workspace whose decisions this tool accepts (required): a receipt
   * another workspace's admin or rules granted must not run this tool.
   */
  workspaceId: string;
  approvalId?: string;
}

export interface ReceiptVerifierOptions {
  /** The Tollgate server's base URL; its keys are read from `<url>/.well-known/jwks.json`. */
  url: string;
  /** The expected `iss`; defaults to `url` without a trailing slash. */
  issuer?: string;
  /** How soon after fetching the keys an unknown key id may fetch them again (default 5 s). */
  jwksCooldownMs?: number;
}

export interface ReceiptVerifier {
  readonly jwksUrl: URL;
  /** Resolves to the receipt's claims, or rejects with a ReceiptError. */
  verify(token: string, expected: ReceiptExpectation): Promise<ReceiptClaims>;
}

const issuerOf = (url: string) => url.replace(/\/+$/, "");

/**
 * A verifier for one Tollgate server, keeping its public keys cached between
 * calls (refetched when a receipt names a key id it does not know yet).
 */
export function createReceiptVerifier(options: ReceiptVerifierOptions): ReceiptVerifier {
  const jwksUrl = new URL(JWKS_PATH, options.url);
  const keys = createRemoteJWKSet(jwksUrl, { cooldownDuration: options.jwksCooldownMs ?? DEFAULT_JWKS_COOLDOWN_MS });
  const issuer = options.issuer ?? issuerOf(options.url);
  return {
    jwksUrl,
    verify: (token, expected) => verifyAgainst(keys, `the keys at ${jwksUrl}`, token, expected, issuer),
  };
}

export type VerifyReceiptOptions = ReceiptExpectation &
  (
    | { url: string; issuer?: string; jwks?: never }
    /** Keys given directly: `iss` is checked only when `issuer` is given. */
    | { jwks: JSONWebKeySet; issuer?: string; url?: never }
  );

/** One-shot verification, against keys given directly or fetched from the server's URL. */
export async function verifyReceipt(token: string, options: VerifyReceiptOptions): Promise<ReceiptClaims> {
  if (options.jwks) return verifyAgainst(createLocalJWKSet(options.jwks), "the given key set", token, options, options.issuer);
  return createReceiptVerifier({ url: options.url, issuer: options.issuer }).verify(token, options);
}

async function verifyAgainst(
  keys: JWTVerifyGetKey,
  keysName: string,
  token: string,
  expected: ReceiptExpectation,
  issuer: string | undefined,
): Promise<ReceiptClaims> {
  if (typeof expected?.workspaceId !== "string" || expected.workspaceId === "") {
    // Without it any workspace of the server could grant this call: refuse rather than guess.
    throw new TypeError("verify needs workspaceId: the id of the workspace whose decisions this tool accepts (the receipt's `ws`)");
  }
  if (typeof token !== "string" || token.split(".").length !== 3) {
    throw new ReceiptError("malformed", "the receipt is not a compact JWS (three dot-separated parts); pass decision.receipt as it came");
  }
  let payload: JWTPayload;
  let kid: string | undefined;
  try {
    ({ payload, protectedHeader: { kid } } = await jwtVerify(token, keys, {
      algorithms: ACCEPTED_ALGORITHMS,
      typ: RECEIPT_TYPE,
      issuer,
      // jose checks exp only when present: a receipt without one must not pass as eternal.
      requiredClaims: ["iss", "sub", "iat", "exp"],
    }));
  } catch (error) {
    throw receiptErrorFrom(error, keysName, issuer);
  }
  const claims = claimsFrom(payload);
  const approval = `approval ${claims.sub}`;
  if (claims.tool !== expected.tool) {
    throw new ReceiptError("wrong_tool", `the receipt of ${approval} allows the tool "${claims.tool}", not "${expected.tool}"`);
  }
  if (expected.approvalId !== undefined && claims.sub !== expected.approvalId) {
    throw new ReceiptError("wrong_approval", `the receipt is for ${approval}, not approval ${expected.approvalId}`);
  }
  if (claims.ws !== expected.workspaceId) {
    throw new ReceiptError("wrong_workspace", `the receipt of ${approval} is from workspace ${claims.ws}, not ${expected.workspaceId}`);
  }
  if (kid === undefined) throw new ReceiptError("malformed", `the receipt of ${approval} names no signing key (kid): it is not a Tollgate decision receipt`);
  // A workspace's key signs only that workspace's receipts (the server-wide key of before names none).
  const keyWorkspace = workspaceOfKeyId(kid);
  if (keyWorkspace !== undefined && keyWorkspace !== claims.ws) {
    throw new ReceiptError("wrong_workspace", `the receipt of ${approval} claims workspace ${claims.ws} but was signed with a key of ${keyWorkspace}`);
  }
  if (claims.args_sha256 !== argsSha256(expected.args)) {
    throw new ReceiptError(
      "wrong_args",
      `the receipt of ${approval} allows "${claims.tool}" with other arguments than these: ` +
        "run the tool with exactly the approved arguments (decision.args for an edit)",
    );
  }
  return claims;
}

const STRING_CLAIMS = ["iss", "sub", "jti", "ws", "req", "agent", "tool", "args_sha256", "decided_by"] as const;

function claimsFrom(payload: JWTPayload): ReceiptClaims {
  for (const name of STRING_CLAIMS) {
    if (typeof payload[name] !== "string") {
      throw new ReceiptError("malformed", `the receipt has no "${name}" claim (text expected): it is not a Tollgate decision receipt`);
    }
  }
  if (!/^[0-9a-f]{64}$/.test(payload.args_sha256 as string)) {
    throw new ReceiptError("malformed", 'the receipt\'s "args_sha256" claim is not a hex SHA-256');
  }
  return payload as unknown as ReceiptClaims;
}

/** jose's failures in the receipt's terms; failures to reach the keys are not the receipt's and pass through. */
function receiptErrorFrom(error: unknown, keysName: string, issuer: string | undefined): unknown {
  const subject = (payload: unknown) => {
    const sub = (payload as JWTPayload | undefined)?.sub;
    return typeof sub === "string" ? `the receipt of approval ${sub}` : "the receipt";
  };
  if (error instanceof errors.JWTExpired) {
    const exp = (error.payload as JWTPayload).exp;
    const when = typeof exp === "number" ? ` at ${new Date(exp * 1000).toISOString()}` : "";
    return new ReceiptError("expired", `${subject(error.payload)} expired${when}: ask for a new decision`, { cause: error });
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "iss" && error.reason === "check_failed") {
      return new ReceiptError(
        "wrong_issuer",
        `${subject(error.payload)} was issued by ${JSON.stringify(error.payload.iss)}, not by ${JSON.stringify(issuer)}: ` +
          "it comes from another Tollgate server, or that server's TOLLGATE_PUBLIC_URL differs from the URL given here",
        { cause: error },
      );
    }
    return new ReceiptError("malformed", `${subject(error.payload)} is not a valid decision receipt: ${error.message}`, { cause: error });
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return new ReceiptError("invalid_signature", "the receipt's signature does not match its content: it was altered after signing", { cause: error });
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return new ReceiptError(
      "invalid_signature",
      `the receipt was signed with a key that is not among ${keysName}: it was not signed by this Tollgate server, or so long ago that the key is withdrawn`,
      { cause: error },
    );
  }
  if (
    error instanceof errors.JWSInvalid ||
    error instanceof errors.JWTInvalid ||
    error instanceof errors.JOSEAlgNotAllowed ||
    error instanceof errors.JOSENotSupported
  ) {
    return new ReceiptError("malformed", `the receipt is not a valid decision receipt: ${error.message}`, { cause: error });
  }
  return error;
}
