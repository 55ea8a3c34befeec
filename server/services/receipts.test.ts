// Receipts signed here and checked by the SDK verifier, on a real (in-memory)
// database: every way a receipt can fail to allow a call has its code.
import { createHash } from "node:crypto";
import { decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { argsSha256, ReceiptError, verifyReceipt, type ReceiptErrorCode, type VerifyReceiptOptions } from "../../sdk/src/receipts.ts";
import { createTestDatabase, resetDatabase, type TestDatabase } from "../../test/harness.ts";
import { ReceiptKeyError, ReceiptSigner, receiptSubjectOf, ROTATIONS_PER_HOUR, type ReceiptSignerOptions, type ReceiptSubject } from "./receipts.ts";

const ISSUER = "https://tollgate.example.com";
const SECRET = "s".repeat(32) + "-the-first-servers-secret";
const HOUR = 3600_000;
const ARGS = { to: "a@example.com", cc: ["b@example.com"], body: { text: "hi", html: null } };

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.close();
});
beforeEach(async () => {
  await resetDatabase(db.prisma);
});

const signer = (options: Partial<ReceiptSignerOptions> = {}) => new ReceiptSigner({ prisma: db.prisma, secret: SECRET, issuer: ISSUER, ...options });

const subject = (overrides: Partial<ReceiptSubject> = {}): ReceiptSubject => ({
  approvalId: "apr_1",
  requestId: "req_1",
  workspaceId: "ws_1",
  agent: "mailer",
  tool: "send_email",
  approvedArgs: { to: "a@example.com", cc: ["b@example.com"], body: { text: "hi", html: null } },
  decidedBy: "ops@example.com",
  decidedAt: new Date(),
  ...overrides,
});

async function refusal(promise: Promise<unknown>): Promise<ReceiptError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ReceiptError);
  return error as ReceiptError;
}

describe("decision receipts: signing and verifying", () => {
  it("receipt: a signed receipt verifies and carries exactly the documented claims", async () => {
    const receipts = signer();
    const decidedAt = new Date(Date.now() - 1234);
    const token = await receipts.sign(subject({ decidedAt }));
    const { kid } = (await receipts.ready("ws_1"))!;
    expect(kid).toMatch(/^ws_1\.[A-Za-z0-9_-]{43}$/);

    expect(decodeProtectedHeader(token)).toEqual({ alg: "EdDSA", kid, typ: "tollgate-receipt+jwt" });
    const claims = await verifyReceipt(token, {
      tool: "send_email",
      args: subject().approvedArgs,
      jwks: await receipts.jwks(),
      issuer: ISSUER,
      approvalId: "apr_1",
      workspaceId: "ws_1",
    });
    const iat = Math.floor(decidedAt.getTime() / 1000);
    expect(claims).toEqual({
      iss: ISSUER,
      sub: "apr_1",
      jti: "apr_1",
      ws: "ws_1",
      req: "req_1",
      agent: "mailer",
      tool: "send_email",
      args_sha256: argsSha256(subject().approvedArgs),
      decided_by: "ops@example.com",
      iat,
      exp: iat + 3600,
    });
  }, 30_000); // the first test starts the signing thread pool and the keys: slow on a busy machine

  it("receipt: signed in the thread pool (a server on the embedded database), it is the same receipt, byte for byte (Ed25519 is deterministic)", async () => {
    const onTheLoop = signer();
    const inThePool = signer({ signOffTheEventLoop: true });
    const decided = subject();
    const token = await inThePool.sign(decided);
    expect(token).toBe(await onTheLoop.sign(decided));
    await expect(
      verifyReceipt(token, { tool: "send_email", args: decided.approvedArgs, jwks: await inThePool.jwks(), issuer: ISSUER, approvalId: "apr_1", workspaceId: "ws_1" }),
    ).resolves.toMatchObject({ sub: "apr_1" });
  });

  it("receipt: the same arguments with keys in another order still verify (RFC 8785)", async () => {
    const receipts = signer();
    const token = await receipts.sign(subject());
    const reordered = { body: { html: null, text: "hi" }, cc: ["b@example.com"], to: "a@example.com" };
    await expect(verifyReceipt(token, { tool: "send_email", args: reordered, jwks: await receipts.jwks(), issuer: ISSUER, workspaceId: "ws_1" })).resolves.toMatchObject({ sub: "apr_1" });
  });

  it("receipt: the hash is the hex SHA-256 of the RFC 8785 text", () => {
    // {"a":1,"b":[1e+21,0.5,"é"]} is the canonical form; its SHA-256 is fixed.
    const canonical = '{"a":1,"b":[1e+21,0.5,"é"]}';
    const expected = createHash("sha256").update(canonical, "utf8").digest("hex");
    expect(argsSha256({ b: [1e21, 0.5, "é"], a: 1.0 })).toBe(expected);
    expect(() => argsSha256(undefined)).toThrow(/JSON value/);
  });

  const refusals: [string, ReceiptErrorCode, (token: string, jwks: VerifyReceiptOptions["jwks"]) => Promise<unknown>, RegExp][] = [
    [
      "other arguments",
      "wrong_args",
      (token, jwks) => verifyReceipt(token, { tool: "send_email", args: { ...(subject().approvedArgs as object), to: "evil@example.com" }, jwks: jwks!, issuer: ISSUER, workspaceId: "ws_1" }),
      /other arguments than these/,
    ],
    ["another tool", "wrong_tool", (token, jwks) => verifyReceipt(token, { tool: "delete_user", args: subject().approvedArgs, jwks: jwks!, issuer: ISSUER, workspaceId: "ws_1" }), /allows the tool "send_email", not "delete_user"/],
    ["another issuer", "wrong_issuer", (token, jwks) => verifyReceipt(token, { tool: "send_email", args: subject().approvedArgs, jwks: jwks!, issuer: "https://other.example.com", workspaceId: "ws_1" }), /issued by "https:\/\/tollgate.example.com"/],
    ["another approval", "wrong_approval", (token, jwks) => verifyReceipt(token, { tool: "send_email", args: subject().approvedArgs, jwks: jwks!, approvalId: "apr_2", workspaceId: "ws_1" }), /for approval apr_1, not approval apr_2/],
    ["another workspace", "wrong_workspace", (token, jwks) => verifyReceipt(token, { tool: "send_email", args: subject().approvedArgs, jwks: jwks!, workspaceId: "ws_2" }), /from workspace ws_1, not ws_2/],
    [
      "a tampered payload",
      "invalid_signature",
      (token, jwks) => {
        const [header, payload, signature] = token.split(".") as [string, string, string];
        const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
        const forged = Buffer.from(JSON.stringify({ ...claims, tool: "delete_user" })).toString("base64url");
        return verifyReceipt(`${header}.${forged}.${signature}`, { tool: "delete_user", args: subject().approvedArgs, jwks: jwks!, issuer: ISSUER, workspaceId: "ws_1" });
      },
      /altered after signing/,
    ],
    ["text that is no JWS", "malformed", (_token, jwks) => verifyReceipt("not-a-receipt", { tool: "send_email", args: {}, jwks: jwks!, workspaceId: "ws_1" }), /compact JWS/],
  ];

  it.each(refusals)("receipt: %s is refused as %s", async (_name, code, verify, message) => {
    const receipts = signer();
    const token = await receipts.sign(subject());
    const error = await refusal(verify(token, await receipts.jwks()));
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
  });

  it("receipt: one past its expiry is refused as expired, naming when it expired", async () => {
    const receipts = signer({ ttlSeconds: 60 });
    const decidedAt = new Date(Date.now() - 2 * 60_000);
    const token = await receipts.sign(subject({ decidedAt }));
    const error = await refusal(verifyReceipt(token, { tool: "send_email", args: subject().approvedArgs, jwks: await receipts.jwks(), issuer: ISSUER, workspaceId: "ws_1" }));
    expect(error.code).toBe("expired");
    expect(error.message).toContain(new Date((Math.floor(decidedAt.getTime() / 1000) + 60) * 1000).toISOString());
  });

  it("receipt: one signed by a key the server never published is refused as invalid_signature", async () => {
    const receipts = signer();
    await receipts.ready();
    const stranger = await generateKeyPair("EdDSA", { crv: "Ed25519" });
    const claims = { ...JSON.parse(Buffer.from((await receipts.sign(subject())).split(".")[1]!, "base64url").toString("utf8")) };
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: "EdDSA", kid: "stranger", typ: "tollgate-receipt+jwt" }).sign(stranger.privateKey);
    const error = await refusal(verifyReceipt(forged, { tool: "send_email", args: subject().approvedArgs, jwks: await receipts.jwks(), issuer: ISSUER, workspaceId: "ws_1" }));
    expect(error.code).toBe("invalid_signature");
    expect(error.message).toMatch(/not among the given key set/);
  });

  it("receipt: a token without exp, or of another typ, is not a receipt", async () => {
    const pair = await generateKeyPair("EdDSA", { crv: "Ed25519" });
    const jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: "k", alg: "EdDSA" }] };
    const claims = { iss: ISSUER, sub: "apr_1", jti: "apr_1", ws: "ws_1", req: "req_1", agent: "a", tool: "t", args_sha256: argsSha256({}), decided_by: "x", iat: 1 };
    const eternal = await new SignJWT(claims).setProtectedHeader({ alg: "EdDSA", kid: "k", typ: "tollgate-receipt+jwt" }).sign(pair.privateKey);
    expect((await refusal(verifyReceipt(eternal, { tool: "t", args: {}, jwks, workspaceId: "ws_1" }))).code).toBe("malformed");
    const plainJwt = await new SignJWT({ ...claims, exp: 4_000_000_000 }).setProtectedHeader({ alg: "EdDSA", kid: "k", typ: "JWT" }).sign(pair.privateKey);
    expect((await refusal(verifyReceipt(plainJwt, { tool: "t", args: {}, jwks, workspaceId: "ws_1" }))).code).toBe("malformed");
  });

  it("receipt: signing after the first call needs no database (its cost is measured in npm run bench, not here)", async () => {
    let keyTableReads = 0;
    const countingPrisma = new Proxy(db.prisma, {
      get(target, property, receiver) {
        if (property === "signingKey") keyTableReads += 1;
        return Reflect.get(target, property, receiver);
      },
    });
    const receipts = signer({ prisma: countingPrisma });
    await receipts.sign(subject());
    expect(keyTableReads).toBeGreaterThan(0);
    keyTableReads = 0;
    for (let i = 0; i < 20; i++) await receipts.sign(subject({ approvalId: `apr_${i}` }));
    expect(keyTableReads).toBe(0);
  });
});

describe("decision receipts: keys", () => {
  const kidOf = (token: string) => decodeProtectedHeader(token).kid;
  const verifyIn = (token: string, workspaceId: string, jwks: VerifyReceiptOptions["jwks"]) =>
    verifyReceipt(token, { tool: "send_email", args: ARGS, jwks: jwks!, issuer: ISSUER, workspaceId });

  it("keys: the private key is stored encrypted, never as a JWK", async () => {
    await signer().ready("ws_1");
    const [row] = await db.prisma.signingKey.findMany();
    expect(row!.privateKeyEncrypted).toMatch(/^v1\./);
    expect(row!.privateKeyEncrypted).not.toContain('"d"');
    expect(row!.publicJwk).not.toHaveProperty("d");
    expect(row!.publicJwk).toMatchObject({ kty: "OKP", crv: "Ed25519", kid: row!.kid, alg: "EdDSA", use: "sig" });
    expect(row!.workspaceId).toBe("ws_1");
  });

  it("keys: each workspace signs with a key of its own that names it; a receipt of one workspace is refused as another's", async () => {
    const receipts = signer();
    const ofC = await receipts.sign(subject({ workspaceId: "ws_C" }));
    const ofA = await receipts.sign(subject({ workspaceId: "ws_A" }));
    expect(kidOf(ofC)).toMatch(/^ws_C\./);
    expect(kidOf(ofA)).toMatch(/^ws_A\./);
    const jwks = await receipts.jwks();
    expect(jwks.keys.map((key) => key.kid)).toEqual(expect.arrayContaining([kidOf(ofC), kidOf(ofA)]));
    await expect(verifyIn(ofA, "ws_A", jwks)).resolves.toMatchObject({ ws: "ws_A" });
    expect((await refusal(verifyIn(ofC, "ws_A", jwks))).code).toBe("wrong_workspace");
    // The per-workspace set holds only that workspace's keys.
    expect((await receipts.jwks("ws_A")).keys.map((key) => key.kid)).toEqual([kidOf(ofA)]);
  });

  it("keys: a receipt claiming one workspace but signed with another workspace's key is refused", async () => {
    const pair = await generateKeyPair("EdDSA", { crv: "Ed25519" });
    const jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: "ws_C.k", alg: "EdDSA" }] };
    const claims = { iss: ISSUER, sub: "apr_1", jti: "apr_1", ws: "ws_A", req: "req_1", agent: "a", tool: "send_email", args_sha256: argsSha256(ARGS), decided_by: "x" };
    const token = await new SignJWT(claims).setProtectedHeader({ alg: "EdDSA", kid: "ws_C.k", typ: "tollgate-receipt+jwt" }).setIssuedAt().setExpirationTime("1h").sign(pair.privateKey);
    const error = await refusal(verifyIn(token, "ws_A", jwks));
    expect(error.code).toBe("wrong_workspace");
    expect(error.message).toMatch(/signed with a key of ws_C/);
  });

  it("keys: a verifier that names no workspace is refused before anything is checked", async () => {
    const receipts = signer();
    const token = await receipts.sign(subject());
    const options = { tool: "send_email", args: ARGS, jwks: await receipts.jwks(), issuer: ISSUER } as unknown as VerifyReceiptOptions;
    await expect(verifyReceipt(token, options)).rejects.toThrow(TypeError);
    await expect(verifyReceipt(token, { ...options, workspaceId: "" })).rejects.toThrow(/verify needs workspaceId/);
  });

  it("keys: an audit digest's signature is published but does not pass as a receipt", async () => {
    const receipts = signer();
    await receipts.ready("ws_1");
    const digest = await receipts.signDigest({ ws: "ws_1", seq: 1, head: "0".repeat(64), sealed_at: new Date().toISOString() });
    const jwks = await receipts.jwks();
    expect(jwks.keys.map((key) => key.kid)).toContain(kidOf(digest));
    expect(kidOf(digest)).toMatch(/^audit-digest\./);
    // Another signer with the same secret (another node) signs digests with the same key, kept nowhere.
    expect(kidOf(await signer().signDigest({ ws: "ws_1" }))).toBe(kidOf(digest));
    await expect(verifyIn(digest, "ws_1", jwks)).rejects.toBeInstanceOf(ReceiptError);
  });

  it("keys: a receipt of the server-wide key of before still verifies for its workspace until it expires, then the key is withdrawn", async () => {
    let now = new Date();
    const receipts = signer({ now: () => now });
    // The key as an older server made it: its thumbprint alone as kid, no workspace; retired at the upgrade.
    const pair = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
    const publicJwk = { ...(await exportJWK(pair.publicKey)), kid: "legacythumbprint", alg: "EdDSA", use: "sig" };
    await db.prisma.signingKey.create({ data: { kid: "legacythumbprint", alg: "EdDSA", publicJwk, privateKeyEncrypted: "v1.x", createdAt: now, retiredAt: now } });
    const claims = { iss: ISSUER, sub: "apr_1", jti: "apr_1", ws: "ws_1", req: "req_1", agent: "a", tool: "send_email", args_sha256: argsSha256(ARGS), decided_by: "x" };
    const old = await new SignJWT(claims).setProtectedHeader({ alg: "EdDSA", kid: "legacythumbprint", typ: "tollgate-receipt+jwt" }).setIssuedAt().setExpirationTime("1h").sign(pair.privateKey);
    await expect(verifyIn(old, "ws_1", await receipts.jwks())).resolves.toMatchObject({ ws: "ws_1" });
    expect((await refusal(verifyIn(old, "ws_2", await receipts.jwks()))).code).toBe("wrong_workspace");
    // The server signs nothing more with it.
    expect(kidOf(await receipts.sign(subject()))).toMatch(/^ws_1\./);
    now = new Date(now.getTime() + HOUR + 61_000);
    expect((await receipts.jwks()).keys.map((key) => key.kid)).not.toContain("legacythumbprint");
  });

  it("keys: a key stored under another secret fails with an error naming TOLLGATE_SECRET, until a rotation", async () => {
    await signer().ready("ws_1");
    const otherNode = signer({ secret: "another secret of at least thirty-two characters" });
    const error = await otherNode.sign(subject()).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ReceiptKeyError);
    expect((error as Error).message).toMatch(/encrypted under another TOLLGATE_SECRET/);
    expect((error as Error).message).toMatch(/receipts\.rotateKey/);
    // Said again at once, not retried inside the caller's transaction.
    await expect(otherNode.sign(subject())).rejects.toBe(error);

    const { kid } = await otherNode.rotate("ws_1");
    expect(kidOf(await otherNode.sign(subject()))).toBe(kid);
  });

  it("keys: after a rotation old receipts still verify, new ones carry the new kid, and other workspaces keep their key", async () => {
    let now = new Date();
    const receipts = signer({ now: () => now });
    const before = await receipts.sign(subject({ decidedAt: now }));
    const { kid: oldKid } = (await receipts.ready("ws_1"))!;
    const { kid: otherKid } = (await receipts.ready("ws_2"))!;

    const rotation = await receipts.rotate("ws_1");
    expect(rotation).toEqual({ workspaceId: "ws_1", kid: expect.any(String), retiredKids: [oldKid], rotatedAt: now });
    expect(rotation.kid).not.toBe(oldKid);
    const after = await receipts.sign(subject({ decidedAt: now }));
    expect(kidOf(after)).toBe(rotation.kid);
    expect(kidOf(await receipts.sign(subject({ workspaceId: "ws_2" })))).toBe(otherKid);

    const jwks = await receipts.jwks("ws_1");
    expect(jwks.keys.map((key) => key.kid)).toEqual([rotation.kid, oldKid]);
    for (const token of [before, after]) await expect(verifyIn(token, "ws_1", jwks)).resolves.toMatchObject({ sub: "apr_1" });

    // Once every receipt the old key signed has expired, it is withdrawn.
    now = new Date(now.getTime() + HOUR + 61_000);
    expect((await receipts.jwks("ws_1")).keys.map((key) => key.kid)).toEqual([rotation.kid]);
  });

  it("keys: a workspace rotates at most ROTATIONS_PER_HOUR times an hour; the refusal says when the next is allowed", async () => {
    let now = new Date("2030-01-01T00:00:00Z");
    const receipts = signer({ now: () => now });
    await receipts.ready("ws_1");
    for (let i = 0; i < ROTATIONS_PER_HOUR; i++) {
      now = new Date(now.getTime() + 60_000);
      await receipts.rotate("ws_1");
    }
    const refused = await receipts.rotate("ws_1").catch((caught: unknown) => caught);
    expect(refused).toMatchObject({ code: "TOO_MANY_REQUESTS", message: expect.stringContaining("2030-01-01T01:01:00.000Z") });
    // Another workspace is not held back, and the refused one's key set did not grow.
    await expect(receipts.rotate("ws_2")).resolves.toMatchObject({ workspaceId: "ws_2" });
    expect((await receipts.jwks("ws_1")).keys).toHaveLength(ROTATIONS_PER_HOUR + 1);
    now = new Date("2030-01-01T01:01:00.001Z");
    await expect(receipts.rotate("ws_1")).resolves.toMatchObject({ workspaceId: "ws_1" });
  });

  it("keys: a rotation on another node is picked up once the cache is older than the refresh interval", async () => {
    const nodeA = signer({ refreshIntervalMs: 0 });
    const nodeB = signer();
    await nodeA.ready("ws_1");
    const { kid } = await nodeB.rotate("ws_1");
    // The first signature after the rotation may still use the old key (it is
    // still published); it starts the re-read, after which the new key signs.
    await nodeA.sign(subject());
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(kidOf(await nodeA.sign(subject()))).toBe(kid);
  });

  it("keys: two nodes signing a workspace's first receipt at once both sign, with one key", async () => {
    const [a, b] = [signer(), signer()];
    const [first, second] = await Promise.all([a.sign(subject()), b.sign(subject())]);
    expect(kidOf(first)).toBe(kidOf(second));
    expect(await db.prisma.signingKey.count()).toBe(1);
  });

  it("keys: at start every workspace without a key gets one (workspaces made before keys were per workspace)", async () => {
    await db.prisma.workspace.createMany({ data: [{ id: "ws_old1", name: "one" }, { id: "ws_old2", name: "two" }] });
    const receipts = signer();
    await receipts.ready();
    const rows = await db.prisma.signingKey.findMany({ orderBy: { workspaceId: "asc" } });
    expect(rows.map((row) => row.workspaceId)).toEqual(["ws_old1", "ws_old2"]);
    expect(kidOf(await receipts.sign(subject({ workspaceId: "ws_old2" })))).toBe(rows[1]!.kid);
  });

  it("keys: when two unretired keys exist anyway, the newest signs", async () => {
    const early = signer({ now: () => new Date("2030-01-01T00:00:00Z") });
    await early.ready("ws_1");
    const late = signer({ now: () => new Date("2030-01-01T00:00:01Z") });
    const { kid: newest } = await late.rotate("ws_1");
    await db.prisma.signingKey.updateMany({ data: { retiredAt: null } });
    expect((await signer().ready("ws_1"))!.kid).toBe(newest);
  });
});

describe("decision receipts: the subject of an approval", () => {
  const approval = {
    id: "apr_9",
    requestId: "req_9",
    workspaceId: "ws_9",
    tool: "pay",
    status: "APPROVED" as const,
    approvedArgs: { amount: 12 },
    decidedBy: "policy:small-payments",
    decidedAt: new Date("2030-01-01T00:00:00Z"),
  };

  it("subject: an approved approval gives the fields a receipt states", () => {
    expect(receiptSubjectOf(approval, "payer")).toEqual({
      approvalId: "apr_9",
      requestId: "req_9",
      workspaceId: "ws_9",
      agent: "payer",
      tool: "pay",
      approvedArgs: { amount: 12 },
      decidedBy: "policy:small-payments",
      decidedAt: approval.decidedAt,
    });
  });

  it("subject: a rejected approval has no receipt", () => {
    expect(() => receiptSubjectOf({ ...approval, status: "REJECTED" }, "payer")).toThrow(/apr_9 is REJECTED/);
  });
});
