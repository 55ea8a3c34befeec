// Operator tokens that can be taken back: minted only with the password again,
// named, capped by the workspace, listed, revocable by their owner and by
// admins (NOT_FOUND for anyone else), and dead with their operator's access.
import { describe, expect, it } from "vitest";
import { addPerson, operatorClient, type OperatorClient } from "./clients.ts";
import { ADMIN } from "./harness.ts";
import { callHttp, useTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let admin: OperatorClient;
useTestServer((server, client) => {
  test = server;
  admin = client;
});

const asBearer = (token: string) => callHttp(test.url, "auth.me", "query", {}, { authorization: `Bearer ${token}` });

async function newOperator(role: "OPERATOR" | "VIEWER") {
  const email = `${role.toLowerCase()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const password = `${role} password long`;
  const created = await addPerson(test.url, admin, { email, name: role, role, password });
  return { id: created.id, email, password, client: await operatorClient(test.url, { email, password }) };
}

describe("operator tokens", () => {
  it("mint: needs the password again; a wrong one is refused without a token", async () => {
    await expect(admin.auth.createToken.mutate({ name: "ci", password: "not the password" })).rejects.toMatchObject({
      data: { code: "FORBIDDEN" },
      message: expect.stringMatching(/password is wrong/),
    });
    const missing = await callHttp(test.url, "auth.createToken", "mutation", { name: "ci" }, {});
    expect(missing.status).toBe(401);
    const { token, name, expiresAt } = await admin.auth.createToken.mutate({ name: "ci", ttlHours: 2, password: ADMIN.password });
    expect(name).toBe("ci");
    expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(3_500_000);
    expect((await asBearer(token)).status).toBe(200);
  });

  it("cap: a lifetime above the workspace's limit is refused naming the limit; only admins set it", async () => {
    const viewer = await newOperator("VIEWER");
    await expect(viewer.client.auth.setTokenLimit.mutate({ maxTokenHours: 1 })).rejects.toMatchObject({ data: { code: "FORBIDDEN" } });
    await admin.auth.setTokenLimit.mutate({ maxTokenHours: 24 });
    try {
      expect(await viewer.client.auth.tokenLimit.query()).toEqual({ maxTokenHours: 24 });
      await expect(viewer.client.auth.createToken.mutate({ name: "long", ttlHours: 48, password: viewer.password })).rejects.toMatchObject({
        data: { code: "BAD_REQUEST" },
        message: "ttlHours: at most 24 hours in this workspace (an admin sets the limit)",
      });
      const { expiresAt } = await viewer.client.auth.createToken.mutate({ name: "default", password: viewer.password });
      expect(Date.parse(expiresAt) - Date.now()).toBeLessThanOrEqual(24 * 3600_000);
    } finally {
      await admin.auth.setTokenLimit.mutate({ maxTokenHours: 720 });
    }
  });

  it("list and revoke: owners see and revoke their own; admins everyone's; anyone else gets NOT_FOUND; access ends at once", async () => {
    const alice = await newOperator("OPERATOR");
    const bob = await newOperator("OPERATOR");
    const aliceToken = await alice.client.auth.createToken.mutate({ name: "alice-bot", password: alice.password });
    const bobToken = await bob.client.auth.createToken.mutate({ name: "bob-bot", password: bob.password });

    expect((await alice.client.auth.tokens.query()).items.map((item) => item.name)).toEqual(["alice-bot"]);
    // Asking for everyone's is an admin's question; others get their own.
    expect((await alice.client.auth.tokens.query({ everyone: true })).items.map((item) => item.name)).toEqual(["alice-bot"]);
    const everyone = (await admin.auth.tokens.query({ everyone: true })).items;
    expect(everyone.find((item) => item.id === bobToken.id)).toMatchObject({ name: "bob-bot", owner: bob.email, revokedAt: null });
    expect(JSON.stringify(everyone)).not.toContain(bobToken.token);

    await expect(alice.client.auth.revokeToken.mutate({ tokenId: bobToken.id })).rejects.toMatchObject({ data: { code: "NOT_FOUND" } });
    expect((await asBearer(bobToken.token)).status).toBe(200);

    await alice.client.auth.revokeToken.mutate({ tokenId: aliceToken.id });
    expect((await asBearer(aliceToken.token)).status).toBe(401);
    const revokedByAdmin = await admin.auth.revokeToken.mutate({ tokenId: bobToken.id });
    expect(revokedByAdmin).toMatchObject({ id: bobToken.id, revokedAt: expect.any(String) });
    expect((await asBearer(bobToken.token)).status).toBe(401);
    // A browser session is not a token: it cannot be revoked through this door.
    const [browserSession] = await test.server.database.prisma.operatorSession.findMany({ where: { kind: "BROWSER", operatorId: alice.id }, take: 1 });
    await expect(alice.client.auth.revokeToken.mutate({ tokenId: browserSession!.id })).rejects.toMatchObject({ data: { code: "NOT_FOUND" } });

    const audit = await admin.audit.list.query({ action: "operator.token_revoked" });
    expect(audit.items.map((entry) => entry.actor)).toEqual(expect.arrayContaining([alice.email, ADMIN.email]));
  });

  it("a token never outlives its operator's access: disabled, it is refused", async () => {
    const carol = await newOperator("OPERATOR");
    const { token } = await carol.client.auth.createToken.mutate({ name: "carol-bot", password: carol.password });
    expect((await asBearer(token)).status).toBe(200);
    await admin.operator.setDisabled.mutate({ operatorId: carol.id, disabled: true });
    expect((await asBearer(token)).status).toBe(401);
  });
});
