// Decision receipts over real HTTP: the public key set, rotation by an admin,
// and the SDK verifier reading the live key set of a running server.
import { decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReceiptVerifier, ReceiptError } from "../sdk/src/index.ts";
import { newId } from "../server/domain/ids.ts";
import { hashPassword } from "../server/services/auth.ts";
import { ROTATIONS_PER_HOUR, type ReceiptSubject } from "../server/services/receipts.ts";
import { agentSdk, operatorClient, type OperatorClient } from "./clients.ts";
import { AGENT_KEY } from "./harness.ts";
import { callHttp, startTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let admin: OperatorClient;
beforeAll(async () => {
  test = await startTestServer();
  admin = await operatorClient(test.url);
});
afterAll(async () => {
  await test.close();
});

const args = { to: "a@example.com", amount: 12 };
const subject = (approvalId: string): ReceiptSubject => ({
  approvalId,
  requestId: "req_1",
  workspaceId: test.server.bootstrap.workspaceId,
  agent: "mailer",
  tool: "send_email",
  approvedArgs: args,
  decidedBy: "ops@example.com",
  decidedAt: new Date(),
});

const kidsAt = async (url: string, workspaceId?: string) =>
  ((await (await fetch(`${url}/.well-known/jwks.json${workspaceId ? `?workspace=${workspaceId}` : ""}`)).json()) as { keys: { kid: string }[] }).keys.map((key) => key.kid);

/** Another tenant of the same server: its own admin, agent key, and a rule that approves everything. */
async function workspaceC() {
  const prisma = test.server.database.prisma;
  const workspaceId = newId("ws");
  const credentials = { email: `admin-c-${workspaceId}@example.com`, password: "workspace c admin password" };
  await prisma.workspace.create({ data: { id: workspaceId, name: "C" } });
  const accountId = newId("acc");
  await prisma.account.create({ data: { id: accountId, email: credentials.email, passwordHash: await hashPassword(credentials.password) } });
  await prisma.operator.create({ data: { id: newId("op"), workspaceId, accountId, email: credentials.email, name: "C admin", role: "ADMIN" } });
  // Its first key, as the server gives one to every workspace (when made, or at start).
  await test.server.deps.receipts.ready(workspaceId);
  const adminC = await operatorClient(test.url, credentials);
  const { key } = await adminC.agentKey.create.mutate({ name: "c agents" });
  return { workspaceId, adminC, key };
}

describe("receipts over HTTP", () => {
  it("jwks: anyone can read the public keys, cacheable, without private parts", async () => {
    const response = await fetch(`${test.url}/.well-known/jwks.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/jwk-set+json");
    expect(response.headers.get("cache-control")).toBe("public, max-age=300");
    const body = (await response.json()) as { keys: Record<string, unknown>[] };
    // The workspace's receipt key (its id names the workspace), then the audit digest key.
    expect(body.keys.map((key) => key.kid)).toEqual([expect.stringMatching(new RegExp(`^${test.server.bootstrap.workspaceId}\\.`)), expect.stringMatching(/^audit-digest\./)]);
    for (const key of body.keys) {
      expect(key).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
      expect(key).not.toHaveProperty("d");
    }
    expect(await kidsAt(test.url, test.server.bootstrap.workspaceId)).toEqual([body.keys[0]!.kid]);
    expect((await fetch(`${test.url}/.well-known/jwks.json?workspace=${encodeURIComponent("x y")}`)).status).toBe(400);
  });

  it("jwks: only GET is answered", async () => {
    const response = await fetch(`${test.url}/.well-known/jwks.json`, { method: "POST" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD");
  });

  it("receipt: a receipt of this server verifies against its live key set, with the server's URL as issuer", async () => {
    const token = await test.server.deps.receipts.sign(subject("apr_live"));
    const verifier = createReceiptVerifier({ url: test.url });
    const workspaceId = test.server.bootstrap.workspaceId;
    const claims = await verifier.verify(token, { tool: "send_email", args: { amount: 12, to: "a@example.com" }, approvalId: "apr_live", workspaceId });
    expect(claims).toMatchObject({ iss: test.url, sub: "apr_live", ws: test.server.bootstrap.workspaceId, tool: "send_email" });

    const error = await verifier.verify(token, { tool: "send_email", args: { ...args, amount: 1200 }, workspaceId }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ReceiptError);
    expect((error as ReceiptError).code).toBe("wrong_args");
  });

  it("rotation: only admins rotate; the agent key is refused", async () => {
    const response = await callHttp(test.url, "receipts.rotateKey", "mutation", {}, { authorization: `Bearer ${AGENT_KEY}` });
    expect(response.status).toBe(401);
  });

  it("rotation: after an admin rotates, new receipts use the new key, old ones still verify, and the rotation is audited", async () => {
    const verifier = createReceiptVerifier({ url: test.url, jwksCooldownMs: 0 });
    const before = await test.server.deps.receipts.sign(subject("apr_before"));
    await verifier.verify(before, { tool: "send_email", args, workspaceId: test.server.bootstrap.workspaceId });
    const workspaceId = test.server.bootstrap.workspaceId;
    const [oldKid] = await kidsAt(test.url, workspaceId);

    const rotation = await admin.receipts.rotateKey.mutate();
    expect(rotation.kid).not.toBe(oldKid);
    expect(rotation.retiredKids).toEqual([oldKid]);
    expect(await kidsAt(test.url, workspaceId)).toEqual([rotation.kid, oldKid]);

    const after = await test.server.deps.receipts.sign(subject("apr_after"));
    expect(decodeProtectedHeader(after).kid).toBe(rotation.kid);
    // The verifier meets a key id it has not seen and fetches the key set again.
    await expect(verifier.verify(after, { tool: "send_email", args, workspaceId: test.server.bootstrap.workspaceId })).resolves.toMatchObject({ sub: "apr_after" });
    await expect(verifier.verify(before, { tool: "send_email", args, workspaceId: test.server.bootstrap.workspaceId })).resolves.toMatchObject({ sub: "apr_before" });

    const audit = await admin.audit.list.query({ action: "receipts.key_rotated" });
    expect(audit.items[0]).toMatchObject({ action: "receipts.key_rotated", subjectType: "signing_key", subjectId: rotation.kid, data: { retiredKids: [oldKid] } });
  });

  it("receipt: a receipt another workspace's rule granted does not pass this workspace's tool check", async () => {
    const c = await workspaceC();
    await c.adminC.policy.create.mutate({ name: "approve everything", match: {}, outcome: "approve" });
    const agentOfC = agentSdk(test.url, c.key);
    const { sessionId } = await agentOfC.openSession({});
    const begun = await agentOfC.begin({ sessionId, agent: "mailer" });
    const granted = await agentOfC.call("approval.request", { requestId: begun.requestId, tool: "send_email", args });
    agentOfC.close();
    const receipt = granted.decision!.receipt!;
    expect(decodeProtectedHeader(receipt).kid).toMatch(new RegExp(`^${c.workspaceId}\\.`));

    // Workspace A's tool server, verifying as the README shows.
    const verifierOfA = createReceiptVerifier({ url: test.url });
    const error = await verifierOfA.verify(receipt, { tool: "send_email", args, workspaceId: test.server.bootstrap.workspaceId }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "wrong_workspace" });
    // The way the README used to show it (no workspace) no longer verifies anything.
    await expect(verifierOfA.verify(receipt, { tool: "send_email", args } as never)).rejects.toThrow(/verify needs workspaceId/);
    // In its own workspace it does.
    await expect(verifierOfA.verify(receipt, { tool: "send_email", args, workspaceId: c.workspaceId })).resolves.toMatchObject({ ws: c.workspaceId });
  });

  it("rotation: one workspace's admin rotates only its key, at most ROTATIONS_PER_HOUR an hour, audited there and nowhere else", async () => {
    const c = await workspaceC();
    const workspaceA = test.server.bootstrap.workspaceId;
    const keysOfA = await kidsAt(test.url, workspaceA);
    const auditOfA = (await admin.audit.list.query({ action: "receipts.key_rotated" })).items.length;
    const everyKey = (await kidsAt(test.url)).length;

    const rotations = [];
    for (let i = 0; i < ROTATIONS_PER_HOUR; i++) rotations.push(await c.adminC.receipts.rotateKey.mutate());
    const refused = await c.adminC.receipts.rotateKey.mutate().catch((caught: unknown) => caught);
    expect(refused).toMatchObject({ data: { code: "TOO_MANY_REQUESTS", httpStatus: 429 }, message: expect.stringMatching(/rotated 3 times in the last hour/) });

    // A's keys and A's audit log are untouched; the key set grew by C's keys alone.
    expect(await kidsAt(test.url, workspaceA)).toEqual(keysOfA);
    expect((await admin.audit.list.query({ action: "receipts.key_rotated" })).items).toHaveLength(auditOfA);
    expect(await kidsAt(test.url)).toHaveLength(everyKey + ROTATIONS_PER_HOUR);
    const auditOfC = (await c.adminC.audit.list.query({ action: "receipts.key_rotated" })).items;
    expect(auditOfC.map((entry) => entry.subjectId)).toEqual(rotations.map((rotation) => rotation.kid).reverse());
  });

  it("restart: the server reads its own key again (secret.key kept in the data folder) and signs with it", async () => {
    const [currentKid] = await kidsAt(test.url, test.server.bootstrap.workspaceId);
    test = await test.restart();
    const token = await test.server.deps.receipts.sign(subject("apr_restarted"));
    expect(decodeProtectedHeader(token).kid).toBe(currentKid);
    await expect(createReceiptVerifier({ url: test.url }).verify(token, { tool: "send_email", args, workspaceId: test.server.bootstrap.workspaceId })).resolves.toMatchObject({ iss: test.url });
  });
});
