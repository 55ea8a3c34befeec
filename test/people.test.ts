// Admins change who may do what, and it takes effect at once: a role on the
// next call; disabling and a new password end every session and token, and
// the sockets opened with them; the workspace always keeps an enabled admin.
import { io } from "socket.io-client";
import { describe, expect, it } from "vitest";
import { addPerson, operatorClient, type OperatorClient } from "./clients.ts";
import { callHttp, useTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let admin: OperatorClient;
useTestServer((server, client) => {
  test = server;
  admin = client;
});

async function newPerson(role: "ADMIN" | "OPERATOR" | "VIEWER") {
  const email = `${role.toLowerCase()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const password = `${role} password long`;
  const { id } = await addPerson(test.url, admin, { email, name: role, role, password });
  const login = await fetch(`${test.url}/api/trpc/auth.login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password }) });
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
  return { id, email, password, cookie, client: await operatorClient(test.url, { email, password }) };
}

const asCookie = (cookie: string) => callHttp(test.url, "auth.me", "query", {}, { cookie, origin: test.url });

async function connected(cookie: string) {
  const socket = io(test.url, { auth: { token: cookie.split("=")[1]! }, transports: ["websocket"], reconnection: false });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("connect_error", reject);
  });
  return socket;
}

describe("people", () => {
  it("role: a change applies to the operator's very next call", async () => {
    const person = await newPerson("OPERATOR");
    expect((await person.client.auth.me.query()).operator.role).toBe("OPERATOR");
    await admin.operator.setRole.mutate({ operatorId: person.id, role: "VIEWER" });
    expect((await person.client.auth.me.query()).operator.role).toBe("VIEWER");
    await expect(person.client.approval.decideMany.mutate({ approvalIds: ["apr_0000000000000000000000"], action: "approve" })).rejects.toMatchObject({ data: { code: "FORBIDDEN" } });
  });

  it("disable: every session and token ends at once and its socket closes; login is refused until enabled again", async () => {
    const person = await newPerson("OPERATOR");
    const { token } = await person.client.auth.createToken.mutate({ name: "bot", password: person.password });
    const socket = await connected(person.cookie);
    const closed = new Promise<string>((resolve) => socket.once("disconnect", resolve));

    await admin.operator.setDisabled.mutate({ operatorId: person.id, disabled: true });
    expect(await closed).toBe("io server disconnect");
    expect((await asCookie(person.cookie)).status).toBe(401);
    expect((await callHttp(test.url, "auth.me", "query", {}, { authorization: `Bearer ${token}` })).status).toBe(401);
    await expect(operatorClient(test.url, { email: person.email, password: person.password })).rejects.toThrow(/401/);

    await admin.operator.setDisabled.mutate({ operatorId: person.id, disabled: false });
    const again = await operatorClient(test.url, { email: person.email, password: person.password });
    expect((await again.auth.me.query()).operator.email).toBe(person.email);
    // Enabling does not bring old tokens back.
    expect((await callHttp(test.url, "auth.me", "query", {}, { authorization: `Bearer ${token}` })).status).toBe(401);
  });

  it("reset password: the old one stops working and every session ends", async () => {
    const person = await newPerson("VIEWER");
    const result = await admin.operator.resetPassword.mutate({ operatorId: person.id, password: "a brand new password" });
    expect(result.sessionsEnded).toBeGreaterThanOrEqual(2);
    expect((await asCookie(person.cookie)).status).toBe(401);
    await expect(operatorClient(test.url, { email: person.email, password: person.password })).rejects.toThrow(/401/);
    await operatorClient(test.url, { email: person.email, password: "a brand new password" });
  });

  it("the workspace keeps an enabled admin; only admins change people; unknown ids are NOT_FOUND", async () => {
    const me = (await admin.auth.me.query()).operator;
    const others = (await admin.operator.list.query()).items.filter((person) => person.role === "ADMIN" && !person.disabled && person.id !== me.id);
    for (const other of others) await admin.operator.setRole.mutate({ operatorId: other.id, role: "OPERATOR" });
    await expect(admin.operator.setRole.mutate({ operatorId: me.id, role: "VIEWER" })).rejects.toMatchObject({
      data: { code: "CONFLICT" },
      message: expect.stringMatching(/would leave the workspace without an admin/),
    });
    await expect(admin.operator.setDisabled.mutate({ operatorId: me.id, disabled: true })).rejects.toMatchObject({ data: { code: "CONFLICT" } });

    const deputy = await newPerson("ADMIN");
    await admin.operator.setRole.mutate({ operatorId: me.id, role: "OPERATOR" });
    await deputy.client.operator.setRole.mutate({ operatorId: me.id, role: "ADMIN" });

    const operator = await newPerson("OPERATOR");
    await expect(operator.client.operator.setDisabled.mutate({ operatorId: deputy.id, disabled: true })).rejects.toMatchObject({ data: { code: "FORBIDDEN" } });
    await expect(admin.operator.setRole.mutate({ operatorId: "op_0000000000000000000000", role: "VIEWER" })).rejects.toMatchObject({ data: { code: "NOT_FOUND" } });

    const log = await admin.audit.list.query({ action: "operator.role_changed" });
    expect(log.items.length).toBeGreaterThanOrEqual(3);
  });
});
