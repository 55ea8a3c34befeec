// Agent keys as a security review wants them: a format scanners recognise,
// with a checksum that refuses made-up keys; last use recorded; the webhook
// secret sealed in the database; revocation ending access and sockets at once.
import { io } from "socket.io-client";
import { afterAll, describe, expect, it } from "vitest";
import { webhookSecretFor } from "../server/domain/webhook.ts";
import { SEALED_PREFIX } from "../server/secret-box.ts";
import { agentSdk, operatorClient, type OperatorClient } from "./clients.ts";
import { callHttp, useTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let admin: OperatorClient;
useTestServer((server, client) => {
  test = server;
  admin = client;
});

// The server a test restarted is this file's to close.
afterAll(() => test.close());

const openSession = (key: string) => callHttp(test.url, "session.open", "mutation", {}, { authorization: `Bearer ${key}` });

describe("agent keys", () => {
  it("format: a new key is tgk_ + 30 base62 + _ + a 6-character checksum; a key with a wrong checksum is refused like an unknown one", async () => {
    const { key, keyPrefix } = await admin.agentKey.create.mutate({ name: "format" });
    expect(key).toMatch(/^tgk_[0-9A-Za-z]{30}_[0-9A-Za-z]{6}$/);
    expect(keyPrefix).toBe(key.slice(0, 10));
    expect((await openSession(key)).status).toBe(200);
    const typo = key.slice(0, -1) + (key.endsWith("a") ? "b" : "a");
    const refused = await openSession(typo);
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toMatch(/agent key/i);
  });

  it("last use: recorded after a call, and shown in the list", async () => {
    const { id, key } = await admin.agentKey.create.mutate({ name: "used" });
    expect((await admin.agentKey.list.query()).items.find((item) => item.id === id)!.lastUsedAt).toBeNull();
    expect((await openSession(key)).status).toBe(200);
    await expect.poll(async () => (await admin.agentKey.list.query()).items.find((item) => item.id === id)!.lastUsedAt).not.toBeNull();
  });

  it("webhook secret: stored sealed, never the derived value itself; rows stored in the clear are sealed at the next start", async () => {
    const { id, key } = await admin.agentKey.create.mutate({ name: "sealed" });
    const stored = await test.server.database.prisma.agentKey.findUniqueOrThrow({ where: { id } });
    expect(stored.webhookSecret.startsWith(SEALED_PREFIX)).toBe(true);
    expect(stored.webhookSecret).not.toContain(webhookSecretFor(key));

    // A database from before sealing: the secret in the clear.
    await test.server.database.prisma.agentKey.update({ where: { id }, data: { webhookSecret: webhookSecretFor(key) } });
    test = await test.restart();
    admin = await operatorClient(test.url);
    const resealed = await test.server.database.prisma.agentKey.findUniqueOrThrow({ where: { id } });
    expect(resealed.webhookSecret.startsWith(SEALED_PREFIX)).toBe(true);
    expect(resealed.webhookSecret).not.toContain(webhookSecretFor(key));
  });

  it("revoke: the very next call is refused and the key's socket is closed, though the key was cached", async () => {
    const { id, key } = await admin.agentKey.create.mutate({ name: "revoked" });
    const sdk = agentSdk(test.url, key);
    await sdk.openSession({});
    const socket = io(test.url, { auth: { agentKey: key }, transports: ["websocket"], reconnection: false });
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", () => resolve());
      socket.once("connect_error", reject);
    });
    const closed = new Promise<string>((resolve) => socket.once("disconnect", resolve));
    await admin.agentKey.revoke.mutate({ keyId: id });
    expect(await closed).toBe("io server disconnect");
    expect((await openSession(key)).status).toBe(401);
    sdk.close();
  });
});
