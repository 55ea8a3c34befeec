// Signs decision receipts (compact JWS, EdDSA over Ed25519) and publishes their
// public keys. Each workspace has keys of its own in SigningKey, the private
// half encrypted under the server secret; the workspace is in every receipt
// (`ws`) and in its key's id, so a receipt of one workspace cannot pass as
// another's. Audit digests are signed with a key of their own.
import { createPrivateKey, createPublicKey, sign as signEd25519, type KeyObject } from "node:crypto";
import { performance } from "node:perf_hooks";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK } from "jose";
import { argsSha256, RECEIPT_ALGORITHM, RECEIPT_TYPE, receiptKeyId, type ReceiptClaims } from "../../sdk/src/receipts.ts";
import type { PrismaClient } from "../db/client.ts";
import type { Approval, Prisma, SigningKey } from "../db/generated/client.ts";
import { DomainError } from "../domain/errors.ts";
import { log } from "../log.ts";
import { SEALED_PREFIX, SecretBox } from "../secret-box.ts";
import { deriveKey } from "../secret.ts";

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
  workspaceId: string;
  kid: string;
  retiredKids: string[];
  rotatedAt: Date;
}

/** A workspace's new key, made outside the transaction that stores it (preparing it takes no database). */
export interface PreparedKey {
  row: Omit<SigningKey, "publicJwk"> & { workspaceId: string; publicJwk: JWK };
  current: CurrentKey;
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
  /** How old the cached signing keys may get before the table is asked which keys are current. */
  refreshIntervalMs?: number;
  /**
   * Sign in libuv's thread pool, not on the event loop: for a server whose
   * event loop also runs its database (the embedded one), where a signature
   * (0.1 ms or more) holds every other call's statements back. Elsewhere the
   * hop to the pool and back costs more than it frees (docs/performance.md,
   * "What was kept").
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
/**
 * Rotations a workspace may make in an hour: each retired key stays published
 * for the receipts' lifetime, so unlimited rotations would grow the key set
 * every verifier fetches.
 */
export const ROTATIONS_PER_HOUR = 3;
const HOUR_MS = 3600_000;
/** Serialises creating a workspace's first key and rotating it, across nodes. */
const signingKeyLock = (workspaceId: string) => `tollgate:signing-key:${workspaceId}`;
const ENCRYPTION_PURPOSE = "receipt signing keys v1";
const DIGEST_KEY_PURPOSE = "audit digest signing key v1";
/** The key id's prefix of the audit digest key, which is no workspace's. */
export const DIGEST_KEY_PREFIX = "audit-digest";
/** PKCS #8 DER of an Ed25519 private key, up to its 32-byte seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

interface CurrentKey {
  kid: string;
  privateKey: KeyObject;
}

interface DigestKey extends CurrentKey {
  publicJwk: JWK;
}

/**
 * One per process. Each workspace's current key is cached decrypted, so
 * signing is CPU only (well under a millisecond); the table is re-read in the
 * background once the cache is older than the refresh interval, so a rotation
 * on another node is picked up without ever making a signature wait for the
 * database.
 */
export class ReceiptSigner {
  readonly ttlSeconds: number;
  readonly #prisma: PrismaClient;
  readonly #box: SecretBox;
  readonly #issuer: () => string;
  readonly #now: () => Date;
  readonly #refreshIntervalMs: number;
  readonly #signOffTheEventLoop: boolean;
  readonly #digestSeed: Buffer;
  #digestKey: Promise<DigestKey> | undefined;
  /** Each workspace's current key, decrypted. */
  readonly #current = new Map<string, CurrentKey>();
  /** Why a workspace's current key cannot sign on this node (another secret), until a load or a rotation succeeds. */
  readonly #unusable = new Map<string, ReceiptKeyError>();
  readonly #pendingLoads = new Map<string, Promise<CurrentKey>>();
  /** Bumped by a rotation of the workspace, so a load that started before it cannot bring back the retired key. */
  readonly #generation = new Map<string, number>();
  /** performance.now() of the last look at the table: the injected clock may jump, this must not. */
  #checkedAt = Number.NEGATIVE_INFINITY;
  #pendingRefresh: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: ReceiptSignerOptions) {
    this.#prisma = options.prisma;
    this.#box = new SecretBox(options.secret, ENCRYPTION_PURPOSE);
    this.#digestSeed = deriveKey(options.secret, DIGEST_KEY_PURPOSE);
    const issuer = options.issuer;
    this.#issuer = typeof issuer === "string" ? () => issuer : issuer;
    this.ttlSeconds = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;
    this.#now = options.now ?? (() => new Date());
    this.#refreshIntervalMs = options.refreshIntervalMs ?? DEFAULT_REFRESH_INTERVAL_MS;
    this.#signOffTheEventLoop = options.signOffTheEventLoop ?? false;
  }

  /**
   * Loads a workspace's current key, creating its first one if it has none.
   * Without a workspace: gives every workspace that has none its first key
   * (the workspaces made before keys were per workspace) and loads them all.
   * Call it before signing inside a transaction: on the embedded database the
   * one connection is held by that transaction, and a key read would wait for it.
   */
  async ready(workspaceId?: string): Promise<{ kid: string } | undefined> {
    if (workspaceId !== undefined) {
      const key = this.#current.get(workspaceId) ?? (await this.#load(workspaceId));
      return { kid: key.kid };
    }
    const keyless = await this.#prisma.$queryRaw<{ id: string }[]>`
      SELECT w.id FROM "Workspace" w
      WHERE NOT EXISTS (SELECT 1 FROM "SigningKey" k WHERE k."workspaceId" = w.id AND k."retiredAt" IS NULL)`;
    for (const { id } of keyless) await this.#load(id);
    await this.#refresh();
    return undefined;
  }

  /**
   * Has the workspace's key cached before a transaction that may sign with
   * it; a cached key costs nothing. A key this node cannot use is reported
   * by sign(), not here.
   */
  async warm(workspaceId: string): Promise<void> {
    if (this.#current.has(workspaceId) || this.#unusable.has(workspaceId)) return;
    await this.#load(workspaceId).catch((error: unknown) => {
      if (!(error instanceof ReceiptKeyError)) throw error;
    });
  }

  /** For a server: ready(), then keeps the cached keys fresh even while nothing is signed. */
  async start(): Promise<void> {
    try {
      await this.ready();
    } catch (error) {
      // The server still starts, so an admin can rotate to a key this node can read.
      if (!(error instanceof ReceiptKeyError)) throw error;
      log.error(error.message);
    }
    this.#timer ??= setInterval(() => this.#refreshInBackground(), this.#refreshIntervalMs);
    this.#timer.unref();
  }

  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** The compact JWS for a decision that lets the tool run, signed with its workspace's key. */
  async sign(subject: ReceiptSubject): Promise<string> {
    const key = await this.#signingKey(subject.workspaceId);
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
   * Signs a sealed audit chain head with the audit digest key, so anyone
   * holding the published key set can check a digest kept outside the
   * database. That key is derived from the server secret (every node has the
   * same one, and it is never stored), so it outlives every receipt key.
   */
  async signDigest(claims: Record<string, unknown>): Promise<string> {
    const key = await this.#digest();
    return new SignJWT({ ...claims, iss: this.#issuer() })
      .setProtectedHeader({ alg: RECEIPT_ALGORITHM, kid: key.kid, typ: "tollgate-audit-digest+jwt" })
      .setIssuedAt()
      .sign(key.privateKey);
  }

  /**
   * The public keys of every workspace's current key, of retired keys whose
   * receipts may not have expired yet, and of the audit digest key. With a
   * workspace: that workspace's receipt keys only (and the server-wide key of
   * before, while published).
   */
  async jwks(workspaceId?: string): Promise<{ keys: JWK[] }> {
    const stillPublished = new Date(this.#now().getTime() - this.ttlSeconds * 1000 - RETIRED_KEY_GRACE_MS);
    const rows = await this.#prisma.signingKey.findMany({
      where: {
        AND: [
          { OR: [{ retiredAt: null }, { retiredAt: { gt: stillPublished } }] },
          ...(workspaceId === undefined ? [] : [{ OR: [{ workspaceId }, { workspaceId: null }] }]),
        ],
      },
      // Current keys first, then the most recently retired.
      orderBy: [{ retiredAt: { sort: "desc", nulls: "first" } }, { createdAt: "desc" }, { kid: "desc" }],
      select: { publicJwk: true },
    });
    const keys = rows.map((row) => row.publicJwk as JWK);
    if (workspaceId === undefined) keys.push((await this.#digest()).publicJwk);
    return { keys };
  }

  /**
   * A new key for a workspace, to be stored in the transaction that creates
   * the workspace (tx.signingKey.create({ data: prepared.row })); adopt() it
   * once that transaction has committed.
   */
  prepareKey(workspaceId: string, createdAt: Date = this.#now()): Promise<PreparedKey> {
    return this.#newKey(workspaceId, createdAt);
  }

  /** Caches a prepared key whose row has been committed, so its workspace signs without reading the table. */
  adopt(prepared: PreparedKey): void {
    if (!this.#current.has(prepared.row.workspaceId)) this.#current.set(prepared.row.workspaceId, prepared.current);
  }

  /**
   * Makes a new key the workspace's signer and retires its others (they stay
   * published until their receipts expire). At most ROTATIONS_PER_HOUR a
   * workspace: more is TOO_MANY_REQUESTS, saying when the next is allowed.
   * `alsoInTransaction` runs in the same transaction, for the audit entry.
   */
  async rotate(workspaceId: string, alsoInTransaction?: (tx: Prisma.TransactionClient, rotation: KeyRotation) => Promise<unknown>): Promise<KeyRotation> {
    const now = this.#now();
    const fresh = await this.#newKey(workspaceId, now);
    const rotation = await this.#prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${signingKeyLock(workspaceId)}))`;
      // Every key of the workspace but its first was made by a rotation.
      const first = await tx.signingKey.findFirst({ where: { workspaceId }, orderBy: [{ createdAt: "asc" }, { kid: "asc" }], select: { kid: true } });
      const recent = await tx.signingKey.findMany({
        where: { workspaceId, createdAt: { gt: new Date(now.getTime() - HOUR_MS) }, ...(first ? { kid: { not: first.kid } } : {}) },
        orderBy: { createdAt: "asc" },
        select: { createdAt: true },
      });
      if (recent.length >= ROTATIONS_PER_HOUR) {
        const nextAt = new Date(recent[recent.length - ROTATIONS_PER_HOUR]!.createdAt.getTime() + HOUR_MS);
        throw new DomainError(
          "TOO_MANY_REQUESTS",
          `this workspace's receipt key was rotated ${recent.length} times in the last hour, the most allowed; the next rotation is possible at ${nextAt.toISOString()}`,
          { retryAt: nextAt.toISOString() },
        );
      }
      const previous = await tx.signingKey.findMany({ where: { workspaceId, retiredAt: null }, select: { kid: true } });
      await tx.signingKey.create({ data: fresh.row });
      await tx.signingKey.updateMany({ where: { workspaceId, retiredAt: null, kid: { not: fresh.row.kid } }, data: { retiredAt: now } });
      const rotation: KeyRotation = { workspaceId, kid: fresh.row.kid, retiredKids: previous.map((key) => key.kid), rotatedAt: now };
      await alsoInTransaction?.(tx, rotation);
      return rotation;
    });
    this.#generation.set(workspaceId, (this.#generation.get(workspaceId) ?? 0) + 1);
    this.#current.set(workspaceId, fresh.current);
    this.#unusable.delete(workspaceId);
    return rotation;
  }

  /**
   * The workspace's cached key; the table is re-read in the background once
   * the cache is stale. Only a workspace's first signature on this node (no
   * ready() before) waits for the database, and a key this node cannot use
   * is reported at once, not retried in the caller's transaction.
   */
  async #signingKey(workspaceId: string): Promise<CurrentKey> {
    if (performance.now() - this.#checkedAt >= this.#refreshIntervalMs) this.#refreshInBackground();
    const cached = this.#current.get(workspaceId);
    if (cached) return cached;
    const unusable = this.#unusable.get(workspaceId);
    if (unusable) throw unusable;
    return this.#load(workspaceId);
  }

  #refreshInBackground(): void {
    this.#refresh().catch((error: unknown) => {
      log.error("could not re-read the receipt signing keys; still signing with the keys cached", error);
    });
  }

  /** Reads which key is current in every workspace and decrypts those new to the cache. */
  #refresh(): Promise<void> {
    this.#pendingRefresh ??= (async () => {
      const generations = new Map(this.#generation);
      try {
        const rows = await this.#prisma.signingKey.findMany({
          where: { retiredAt: null, workspaceId: { not: null } },
          orderBy: [{ createdAt: "desc" }, { kid: "desc" }],
          select: { kid: true, workspaceId: true, privateKeyEncrypted: true },
        });
        this.#checkedAt = performance.now();
        const seen = new Set<string>();
        for (const row of rows) {
          const workspaceId = row.workspaceId!;
          // The newest unretired key of each workspace signs.
          if (seen.has(workspaceId)) continue;
          seen.add(workspaceId);
          if (this.#current.get(workspaceId)?.kid === row.kid) continue;
          const unchanged = () => (this.#generation.get(workspaceId) ?? 0) === (generations.get(workspaceId) ?? 0);
          try {
            const privateKey = this.#decrypt(row);
            if (unchanged()) {
              this.#current.set(workspaceId, { kid: row.kid, privateKey });
              this.#unusable.delete(workspaceId);
            }
          } catch (error) {
            if (!(error instanceof ReceiptKeyError)) throw error;
            if (unchanged()) {
              this.#current.delete(workspaceId);
              this.#unusable.set(workspaceId, error);
            }
            log.error(error.message);
          }
        }
      } finally {
        this.#pendingRefresh = undefined;
      }
    })();
    return this.#pendingRefresh;
  }

  /** Reads the workspace's current key, creating its first one if there is none, and decrypts it. */
  #load(workspaceId: string): Promise<CurrentKey> {
    let pending = this.#pendingLoads.get(workspaceId);
    if (pending) return pending;
    pending = (async () => {
      const generation = this.#generation.get(workspaceId) ?? 0;
      const unchanged = () => generation === (this.#generation.get(workspaceId) ?? 0);
      try {
        const row = (await this.#newestUnretired(this.#prisma, workspaceId)) ?? (await this.#createFirstKey(workspaceId));
        if (unchanged() && row.kid !== this.#current.get(workspaceId)?.kid) {
          const privateKey = this.#decrypt(row);
          if (unchanged()) this.#current.set(workspaceId, { kid: row.kid, privateKey });
        }
        this.#unusable.delete(workspaceId);
        return this.#current.get(workspaceId)!;
      } catch (error) {
        if (error instanceof ReceiptKeyError && unchanged()) {
          this.#current.delete(workspaceId);
          this.#unusable.set(workspaceId, error);
        }
        throw error;
      } finally {
        this.#pendingLoads.delete(workspaceId);
      }
    })();
    this.#pendingLoads.set(workspaceId, pending);
    return pending;
  }

  #newestUnretired(db: PrismaClient | Prisma.TransactionClient, workspaceId: string): Promise<SigningKey | null> {
    return db.signingKey.findFirst({ where: { workspaceId, retiredAt: null }, orderBy: [{ createdAt: "desc" }, { kid: "desc" }] });
  }

  /** Under the workspace's lock, so two nodes signing its first receipt at once end up with one key. */
  async #createFirstKey(workspaceId: string): Promise<SigningKey> {
    const fresh = await this.#newKey(workspaceId, this.#now());
    return this.#prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${signingKeyLock(workspaceId)}))`;
      const existing = await this.#newestUnretired(tx, workspaceId);
      if (existing) return existing;
      return tx.signingKey.create({ data: fresh.row });
    });
  }

  async #newKey(workspaceId: string, createdAt: Date): Promise<PreparedKey> {
    const pair = await generateKeyPair(RECEIPT_ALGORITHM, { crv: "Ed25519", extractable: true });
    const publicPart = await exportJWK(pair.publicKey);
    // The workspace, then the RFC 7638 thumbprint: derived from the key, the same on every node.
    const kid = receiptKeyId(workspaceId, await calculateJwkThumbprint(publicPart));
    const privateJwk = await exportJWK(pair.privateKey);
    return {
      row: {
        kid,
        workspaceId,
        alg: RECEIPT_ALGORITHM,
        publicJwk: { ...publicPart, kid, alg: RECEIPT_ALGORITHM, use: "sig" },
        // AES-256-GCM (SecretBox); the kid is authenticated with it, so a private key cannot be moved to another row.
        privateKeyEncrypted: this.#box.seal(JSON.stringify(privateJwk), kid),
        createdAt,
        retiredAt: null,
      },
      current: { kid, privateKey: privateKeyOf(privateJwk) },
    };
  }

  #decrypt(row: Pick<SigningKey, "kid" | "privateKeyEncrypted">): KeyObject {
    if (!row.privateKeyEncrypted.startsWith(SEALED_PREFIX)) {
      throw new ReceiptKeyError(`receipt signing key ${row.kid} is stored in a format this server does not know; is this server older than the one that created it?`);
    }
    const plaintext = this.#box.open(row.privateKeyEncrypted, row.kid);
    if (plaintext === undefined) {
      throw new ReceiptKeyError(
        `receipt signing key ${row.kid} was encrypted under another TOLLGATE_SECRET than this server's, so it cannot sign: ` +
          "set TOLLGATE_SECRET to the secret of the node that created it (every node needs the same one); " +
          "if that secret is lost, an admin of the workspace can rotate its key (receipts.rotateKey) so that a new key signs",
      );
    }
    return privateKeyOf(JSON.parse(plaintext) as JWK);
  }

  /** The audit digest key: an Ed25519 key whose seed is derived from the server secret. */
  #digest(): Promise<DigestKey> {
    this.#digestKey ??= (async () => {
      const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, this.#digestSeed]), format: "der", type: "pkcs8" });
      const publicPart = await exportJWK(createPublicKey(privateKey));
      const kid = `${DIGEST_KEY_PREFIX}.${await calculateJwkThumbprint(publicPart)}`;
      return { kid, privateKey, publicJwk: { ...publicPart, kid, alg: RECEIPT_ALGORITHM, use: "sig" } };
    })();
    return this.#digestKey;
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
