// Decision receipts over real HTTP: the public key set, rotation by an admin,
// and the SDK verifier reading the live key set of a running server.
import { decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReceiptVerifier, ReceiptError } from "../sdk/src/index.ts";
import type { ReceiptSubject } from "../server/services/receipts.ts";
import { operatorClient, type OperatorClient } from "./clients.ts";
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

const kidsAt = async (url: string) => ((await (await fetch(`${url}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }).keys.map((key) => key.kid);

describe("receipts over HTTP", () => {
  it("jwks: anyone can read the public keys, cacheable, without private parts", async () => {
    const response = await fetch(`${test.url}/.well-known/jwks.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/jwk-set+json");
    expect(response.headers.get("cache-control")).toBe("public, max-age=300");
    const body = (await response.json()) as { keys: Record<string, unknown>[] };
    expect(body.keys).toHaveLength(1);
    expect(body.keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig", kid: expect.any(String) });
    expect(body.keys[0]).not.toHaveProperty("d");
  });

  it("jwks: only GET is answered", async () => {
    const response = await fetch(`${test.url}/.well-known/jwks.json`, { method: "POST" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD");
  });

  it("receipt: a receipt of this server verifies against its live key set, with the server's URL as issuer", async () => {
    const token = await test.server.deps.receipts.sign(subject("apr_live"));
    const verifier = createReceiptVerifier({ url: test.url });
    const claims = await verifier.verify(token, { tool: "send_email", args: { amount: 12, to: "a@example.com" }, approvalId: "apr_live" });
    expect(claims).toMatchObject({ iss: test.url, sub: "apr_live", ws: test.server.bootstrap.workspaceId, tool: "send_email" });

    const error = await verifier.verify(token, { tool: "send_email", args: { ...args, amount: 1200 } }).catch((caught: unknown) => caught);
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
    await verifier.verify(before, { tool: "send_email", args });
    const [oldKid] = await kidsAt(test.url);

    const rotation = await admin.receipts.rotateKey.mutate();
    expect(rotation.kid).not.toBe(oldKid);
    expect(rotation.retiredKids).toEqual([oldKid]);
    expect(await kidsAt(test.url)).toEqual([rotation.kid, oldKid]);

    const after = await test.server.deps.receipts.sign(subject("apr_after"));
    expect(decodeProtectedHeader(after).kid).toBe(rotation.kid);
    // The verifier meets a key id it has not seen and fetches the key set again.
    await expect(verifier.verify(after, { tool: "send_email", args })).resolves.toMatchObject({ sub: "apr_after" });
    await expect(verifier.verify(before, { tool: "send_email", args })).resolves.toMatchObject({ sub: "apr_before" });

    const audit = await admin.audit.list.query({ action: "receipts.key_rotated" });
    expect(audit.items[0]).toMatchObject({ action: "receipts.key_rotated", subjectType: "signing_key", subjectId: rotation.kid, data: { retiredKids: [oldKid] } });
  });

  it("restart: the server reads its own key again (secret.key kept in the data folder) and signs with it", async () => {
    const [currentKid] = await kidsAt(test.url);
    test = await test.restart();
    const token = await test.server.deps.receipts.sign(subject("apr_restarted"));
    expect(decodeProtectedHeader(token).kid).toBe(currentKid);
    await expect(createReceiptVerifier({ url: test.url }).verify(token, { tool: "send_email", args })).resolves.toMatchObject({ iss: test.url });
  });
});
