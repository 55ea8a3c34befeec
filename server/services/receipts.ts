// Signs decision receipts (compact JWS, EdDSA over Ed25519) and publishes their
// public keys. Keys live in SigningKey, the private half encrypted under the server secret.
import { createPrivateKey, sign as signEd25519, type KeyObject } from "node:crypto";
import { performance } from "node:perf_hooks";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK } from "jose";
import { argsSha256, RECEIPT_ALGORITHM, RECEIPT_TYPE, type ReceiptClaims } from "../../sdk/src/receipts.ts";
import type { PrismaClient } from "../db/client.ts";
import type { Approval, Prisma, SigningKey } from "../db/generated/client.ts";
import { log } from "../log.ts";
import { SEALED_PREFIX, SecretBox } from "../secret-box.ts";

/** What a receipt states: who allowed which tool to run with which arguments. */
export interface ReceiptSubject {
  approvalId: string;
  requestId: string;
  workspaceId: string;
  /** The agent name of the approval's task. */
  agent: string;
  tool: string;
  /** The arguments the decision lets the tool run with (the edited ones for an edit). */
  approvedArgs: unknown;
  decidedBy: string;
  decidedAt: Date;
}

export interface KeyRotation {
  kid: string;
  retiredKids: string[];
  rotatedAt: Date;
}

export interface ReceiptSignerOptions {
  prisma: PrismaClient;
  /** TOLLGATE_SECRET (or secret.key): private keys are encrypted under a key derived from it. */
  secret: string;
  /** The `iss` claim, the server's public base URL; a function when it is known only once listening. */
  issuer: string | (() => string);
  /** TOLLGATE_RECEIPT_TTL_SECONDS */
  ttlSeconds?: number;
  /** Stamps keys' creation and retirement and decides which retired keys are still published. */
  now?: () => Date;
  /** How old the cached signing key may get before the table is asked which key is current. */
  refreshIntervalMs?: number;
  /**
   * Sign in libuv's thread pool, not on the event loop: for a server whose
   * event loop also runs its database (the embedded one), where a signature
   * (0.1 ms or more) holds every other call's statements back. Elsewhere the
   * hop to the pool and back costs more than it frees (bench/NOTES.md,
   * "receipt is signed in the thread pool").
   */
  signOffTheEventLoop?: boolean;
}

/** The signing key cannot be used; the message says what to set or do. */
export class ReceiptKeyError extends Error {
  override name = "ReceiptKeyError";
}

const DEFAULT_TTL_SECONDS = 3600;
const DEFAULT_REFRESH_INTERVAL_MS = 5_000;
/**
 * A retired key stays published this long after retiredAt + TTL: another node
 * may sign with it until its cache notices the rotation (one refresh interval).
 */
const RETIRED_KEY_GRACE_MS = 60_000;
/** Serialises creating the first key and rotating, across nodes. */
const SIGNING_KEY_LOCK = "tollgate:signing-key";
const ENCRYPTION_PURPOSE = "receipt signing keys v1";

interface CurrentKey {
  kid: string;
  privateKey: KeyObject;
}

/**
 * One per process. The current key is cached decrypted, so signing is CPU only
 * (well under a millisecond); the table is re-read in the background once the
 * cache is older than the refresh interval, so a rotation on another node is
 * picked up without ever making a signature wait for the database.
 */
export class ReceiptSigner {
  readonly ttlSeconds: number;
  readonly #prisma: PrismaClient;
  readonly #box: SecretBox;
  readonly #issuer: () => string;
  readonly #now: () => Date;
  readonly #refreshIntervalMs: number;
  readonly #signOffTheEventLoop: boolean;
  #current: CurrentKey | undefined;
  /** performance.now() of the last look at the table: the injected clock may jump, this must not. */
  #checkedAt = Number.NEGATIVE_INFINITY;
  #pendingLoad: Promise<CurrentKey> | undefined;
  /** Why the current key cannot sign on this node (another secret), until a load or a rotation succeeds. */
  #unusable: ReceiptKeyError | undefined;
  /** Bumped by rotate, so a load that started before it cannot bring back the retired key. */
  #generation = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: ReceiptSignerOptions) {
    this.#prisma = options.prisma;
    this.#box = new SecretBox(options.secret, ENCRYPTION_PURPOSE);
    const issuer = options.issuer;
    this.#issuer = typeof issuer === "string" ? () => issuer : issuer;
    this.ttlSeconds = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;
    this.#now = options.now ?? (() => new Date());
    this.#refreshIntervalMs = options.refreshIntervalMs ?? DEFAULT_REFRESH_INTERVAL_MS;
    this.#signOffTheEventLoop = options.signOffTheEventLoop ?? false;
  }

  /**
   * Loads the current key, creating the first one if there is none. Call it
   * before signing inside a transaction: on the embedded database the one
   * connection is held by that transaction, and a key read would wait for it.
   */
  async ready(): Promise<{ kid: string }> {
    const key = this.#current ?? (await this.#load());
    return { kid: key.kid };
  }

  /** For a server: ready(), then keeps the cached key fresh even while nothing is signed. */
  async start(): Promise<void> {
    try {
      await this.ready();
    } catch (error) {
      // The server still starts, so an admin can rotate to a key this node can read.
      if (!(error instanceof ReceiptKeyError)) throw error;
      log.error(error.message);
    }
    this.#timer ??= setInterval(() => {
      if (this.#current) this.#refreshInBackground();
    }, this.#refreshIntervalMs);
    this.#timer.unref();
  }

  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** The compact JWS for a decision that lets the tool run. */
  async sign(subject: ReceiptSubject): Promise<string> {
    const key = await this.#signingKey();
    const issuedAt = Math.floor(subject.decidedAt.getTime() / 1000);
    const claims: ReceiptClaims = {
      iss: this.#issuer(),
      sub: subject.approvalId,
      jti: subject.approvalId,
      ws: subject.workspaceId,
      req: subject.requestId,
      agent: subject.agent,
      tool: subject.tool,
      args_sha256: argsSha256(subject.approvedArgs),
      decided_by: subject.decidedBy,
      iat: issuedAt,
      exp: issuedAt + this.ttlSeconds,
    };
    return signCompact({ alg: RECEIPT_ALGORITHM, kid: key.kid, typ: RECEIPT_TYPE }, claims, key.privateKey, { offTheEventLoop: this.#signOffTheEventLoop });
  }

  /**
   * Signs a sealed audit chain head with the current receipt key, so anyone
   * holding the published key set can check a digest kept outside the database.
   */
  async signDigest(claims: Record<string, unknown>): Promise<string> {
    const key = await this.#signingKey();
    return new SignJWT({ ...claims, iss: this.#issuer() })
      .setProtectedHeader({ alg: RECEIPT_ALGORITHM, kid: key.kid, typ: "tollgate-audit-digest+jwt" })
      .setIssuedAt()
      .sign(key.privateKey);
  }

  /** The public keys of the current key and of retired keys whose receipts may not have expired yet. */
  async jwks(): Promise<{ keys: JWK[] }> {
    const stillPublished = new Date(this.#now().getTime() - this.ttlSeconds * 1000 - RETIRED_KEY_GRACE_MS);
    const rows = await this.#prisma.signingKey.findMany({
      where: { OR: [{ retiredAt: null }, { retiredAt: { gt: stillPublished } }] },
      // The current key first, then the most recently retired.
      orderBy: [{ retiredAt: { sort: "desc", nulls: "first" } }, { createdAt: "desc" }, { kid: "desc" }],
      select: { publicJwk: true },
    });
    return { keys: rows.map((row) => row.publicJwk as JWK) };
  }

  /**
   * Makes a new key the signer and retires the others (they stay published
   * until their receipts expire). `alsoInTransaction` runs in the same
   * transaction, for the audit entry.
   */
  async rotate(alsoInTransaction?: (tx: Prisma.TransactionClient, rotation: KeyRotation) => Promise<unknown>): Promise<KeyRotation> {
    const now = this.#now();
    const fresh = await this.#newKey(now);
    const rotation = await this.#prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${SIGNING_KEY_LOCK}))`;
      const previous = await tx.signingKey.findMany({ where: { retiredAt: null }, select: { kid: true } });
      await tx.signingKey.create({ data: fresh.row });
      await tx.signingKey.updateMany({ where: { retiredAt: null, kid: { not: fresh.row.kid } }, data: { retiredAt: now } });
      const rotation: KeyRotation = { kid: fresh.row.kid, retiredKids: previous.map((key) => key.kid), rotatedAt: now };
      await alsoInTransaction?.(tx, rotation);
      return rotation;
    });
    this.#generation += 1;
    this.#current = fresh.current;
    this.#unusable = undefined;
    this.#checkedAt = performance.now();
    return rotation;
  }

  /**
   * The cached key; the table is re-read in the background once the cache is
   * stale. Only the very first signature (no ready() before) waits for the
   * database, and a key this node cannot use is reported at once, not retried
   * in the caller's transaction.
   */
  async #signingKey(): Promise<CurrentKey> {
    const stale = performance.now() - this.#checkedAt >= this.#refreshIntervalMs;
    if (this.#current) {
      if (stale) this.#refreshInBackground();
      return this.#current;
    }
    if (this.#unusable) {
      if (stale) this.#refreshInBackground();
      throw this.#unusable;
    }
    return this.#load();
  }

  #refreshInBackground(): void {
    this.#load().catch((error: unknown) => {
      log.error(`could not re-read the receipt signing key; ${this.#current ? `still signing with ${this.#current.kid}` : "no receipt can be signed"}`, error);
    });
  }

  /** Reads which key is current, creating the first one if there is none, and decrypts it if it is new to the cache. */
  #load(): Promise<CurrentKey> {
    this.#pendingLoad ??= (async () => {
      const generation = this.#generation;
      try {
        const row = (await this.#newestUnretired(this.#prisma)) ?? (await this.#createFirstKey());
        this.#checkedAt = performance.now();
        if (generation === this.#generation && row.kid !== this.#current?.kid) {
          const privateKey = await this.#decrypt(row);
          if (generation === this.#generation) this.#current = { kid: row.kid, privateKey };
        }
        this.#unusable = undefined;
        return this.#current!;
      } catch (error) {
        this.#checkedAt = performance.now();
        if (error instanceof ReceiptKeyError && generation === this.#generation) {
          this.#current = undefined;
          this.#unusable = error;
        }
        throw error;
      } finally {
        this.#pendingLoad = undefined;
      }
    })();
    return this.#pendingLoad;
  }

  #newestUnretired(db: PrismaClient | Prisma.TransactionClient): Promise<SigningKey | null> {
    return db.signingKey.findFirst({ where: { retiredAt: null }, orderBy: [{ createdAt: "desc" }, { kid: "desc" }] });
  }

  /** Under the lock, so two nodes starting on an empty table end up with one key. */
  async #createFirstKey(): Promise<SigningKey> {
    const fresh = await this.#newKey(this.#now());
    return this.#prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${SIGNING_KEY_LOCK}))`;
      const existing = await this.#newestUnretired(tx);
      if (existing) return existing;
      return tx.signingKey.create({ data: fresh.row });
    });
  }

  async #newKey(createdAt: Date): Promise<{ row: Omit<SigningKey, "publicJwk"> & { publicJwk: JWK }; current: CurrentKey }> {
    const pair = await generateKeyPair(RECEIPT_ALGORITHM, { crv: "Ed25519", extractable: true });
    const publicPart = await exportJWK(pair.publicKey);
    // The RFC 7638 thumbprint: a key id derived from the key, the same on every node.
    const kid = await calculateJwkThumbprint(publicPart);
    const privateJwk = await exportJWK(pair.privateKey);
    return {
      row: {
        kid,
        alg: RECEIPT_ALGORITHM,
        publicJwk: { ...publicPart, kid, alg: RECEIPT_ALGORITHM, use: "sig" },
        privateKeyEncrypted: this.#seal(JSON.stringify(privateJwk), kid),
        createdAt,
        retiredAt: null,
      },
      current: { kid, privateKey: privateKeyOf(privateJwk) },
    };
  }

  /** AES-256-GCM (SecretBox); the kid is authenticated with it, so a private key cannot be moved to another row. */
  #seal(plaintext: string, kid: string): string {
    return this.#box.seal(plaintext, kid);
  }

  async #decrypt(row: SigningKey): Promise<KeyObject> {
    if (!row.privateKeyEncrypted.startsWith(SEALED_PREFIX)) {
      throw new ReceiptKeyError(`receipt signing key ${row.kid} is stored in a format this server does not know; is this server older than the one that created it?`);
    }
    const plaintext = this.#box.open(row.privateKeyEncrypted, row.kid);
    if (plaintext === undefined) {
      throw new ReceiptKeyError(
        `receipt signing key ${row.kid} was encrypted under another TOLLGATE_SECRET than this server's, so it cannot sign: ` +
          "set TOLLGATE_SECRET to the secret of the node that created it (every node needs the same one); " +
          "if that secret is lost, an admin can rotate the key (receipts.rotateKey) so that a new key signs",
      );
    }
    return privateKeyOf(JSON.parse(plaintext) as JWK);
  }
}

function privateKeyOf(jwk: JWK): KeyObject {
  const key = createPrivateKey({ key: { ...jwk }, format: "jwk" });
  // Receipts say EdDSA in their header: a key of another kind would sign receipts nobody can verify.
  if (key.asymmetricKeyType !== "ed25519") throw new ReceiptKeyError(`the receipt signing key is ${key.asymmetricKeyType ?? "symmetric"}, not Ed25519`);
  return key;
}

/**
 * A compact JWS (RFC 7515): the header and the claims, base64url-encoded
 * JSON, signed with Node's Ed25519, which signs at once. jose signs through
 * WebCrypto, where every signature waits for a turn of libuv's thread pool: a
 * decision waited about 0.3 ms longer for it under load. The tests verify what
 * this signs with jose (the SDK's verifyReceipt). With `offTheEventLoop` the
 * signature is made in the thread pool (crypto.sign with a callback), for a
 * server whose event loop also runs its database.
 */
async function signCompact(header: object, claims: object, key: KeyObject, { offTheEventLoop }: { offTheEventLoop: boolean }): Promise<string> {
  const encode = (part: object) => Buffer.from(JSON.stringify(part)).toString("base64url");
  const signingInput = `${encode(header)}.${encode(claims)}`;
  const data = Buffer.from(signingInput);
  const signature = offTheEventLoop
    ? await new Promise<Buffer>((resolve, reject) => signEd25519(null, data, key, (error, signed) => (error ? reject(error) : resolve(signed))))
    : signEd25519(null, data, key);
  return `${signingInput}.${signature.toString("base64url")}`;
}

/** The receipt subject of an approval that was just approved (as is or edited). */
export function receiptSubjectOf(
  approval: Pick<Approval, "id" | "requestId" | "workspaceId" | "tool" | "status" | "approvedArgs" | "decidedBy" | "decidedAt">,
  agentName: string,
): ReceiptSubject {
  if (approval.status !== "APPROVED" || approval.decidedBy === null || approval.decidedAt === null) {
    throw new Error(`approval ${approval.id} is ${approval.status}: only a decision that lets the tool run has a receipt`);
  }
  return {
    approvalId: approval.id,
    requestId: approval.requestId,
    workspaceId: approval.workspaceId,
    agent: agentName,
    tool: approval.tool,
    approvedArgs: approval.approvedArgs,
    decidedBy: approval.decidedBy,
    decidedAt: approval.decidedAt,
  };
}
