// The wire contract over real HTTP: plain JSON in and out, clear 4xx errors for bad input.
import { io } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_KEY } from "./harness.ts";
import { callHttp, startTestServer, type TestServer } from "./server.ts";

let test: TestServer;
const agent = { authorization: `Bearer ${AGENT_KEY}` };

beforeAll(async () => {
  test = await startTestServer();
});
afterAll(async () => {
  await test.close();
});

describe("HTTP wire format", () => {
  it("wire: a mutation returns {result: {data}} as plain JSON", async () => {
    const response = await callHttp(test.url, "session.open", "mutation", { title: "wire" }, agent);
    expect(response.status).toBe(200);
    expect(response.body.result.data.sessionId).toMatch(/^ses_/);
  });

  it("wire: a wrong type is 400 naming the field, with the zod issues", async () => {
    const response = await callHttp(test.url, "session.open", "mutation", { title: 42 }, agent);
    expect(response.status).toBe(400);
    expect(response.body.error.message).toMatch(/^invalid input: title: /);
    expect(response.body.error.data).toMatchObject({ code: "BAD_REQUEST", httpStatus: 400, zodIssues: [{ path: ["title"] }] });
    expect(response.body.error.data.stack).toBeUndefined();
  });

  it("wire: malformed JSON is 400, not 500", async () => {
    const response = await callHttp(test.url, "session.open", "mutation", "{not json", agent);
    expect(response.status).toBe(400);
  });

  it("wire: an oversized metadata object is refused with the limit named", async () => {
    const metadata = { blob: "x".repeat(20 * 1024) };
    const response = await callHttp(test.url, "session.open", "mutation", { metadata }, agent);
    expect(response.status).toBe(400);
    expect(response.body.error.message).toMatch(/metadata: must be at most 16 KB as JSON/);
  });

  it("wire: a body over the server's limit is 413", async () => {
    const response = await callHttp(test.url, "session.open", "mutation", { title: "x".repeat(5 * 1024 * 1024) }, agent);
    expect(response.status).toBe(413);
  });

  it("wire: a malformed procedure path is 400 and the server keeps serving", async () => {
    const response = await fetch(`${test.url}/api/trpc/%E0%A4%A`);
    expect(response.status).toBe(400);
    expect((await fetch(`${test.url}/healthz`)).status).toBe(200);
  });

  it("wire: text with a NUL character is refused with 400, not stored or crashed on", async () => {
    const response = await callHttp(test.url, "session.open", "mutation", { title: "bad\u0000title" }, agent);
    expect(response.status).toBe(400);
    expect(response.body.error.message).toMatch(/NUL/);
    const nested = await callHttp(test.url, "session.open", "mutation", { metadata: { deep: ["ok", "x\u0000"] } }, agent);
    expect(nested.status).toBe(400);
  });

  it("wire: a timeout longer than can be scheduled is refused naming the field", async () => {
    const { body } = await callHttp(test.url, "session.open", "mutation", {}, agent);
    const begun = await callHttp(test.url, "request.begin", "mutation", { sessionId: body.result.data.sessionId, agent: "a" }, agent);
    const response = await callHttp(
      test.url,
      "approval.request",
      "mutation",
      { requestId: begun.body.result.data.requestId, tool: "t", args: {}, timeoutMs: 25 * 24 * 3600_000 },
      agent,
    );
    expect(response.status).toBe(400);
    expect(response.body.error.message).toMatch(/timeoutMs/);
  });

  it("wire: an unknown procedure is 404", async () => {
    const response = await callHttp(test.url, "nothing.here", "query", {}, agent);
    expect(response.status).toBe(404);
  });

  it("wire: no credentials is 401 saying how to authenticate", async () => {
    const response = await callHttp(test.url, "session.open", "mutation", {});
    expect(response.status).toBe(401);
    expect(response.body.error.message).toMatch(/Authorization: Bearer/);
  });

  it("wire: login sets an httpOnly SameSite session cookie", async () => {
    const response = await fetch(`${test.url}/api/trpc/auth.login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "admin@example.com", password: "correct horse battery" }),
    });
    expect(response.status).toBe(200);
    const cookie = response.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^tollgate_session=tgs_/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
  });

  it("live updates: a socket needs a session, and logging out closes the connections it opened", async () => {
    const anonymous = io(test.url, { transports: ["websocket"], reconnection: false });
    const refused = await new Promise<string>((resolve) => anonymous.once("connect_error", (error) => resolve(error.message)));
    expect(refused).toMatch(/unauthorized/);
    anonymous.close();

    const login = await fetch(`${test.url}/api/trpc/auth.login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "admin@example.com", password: "correct horse battery" }),
    });
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
    const socket = io(test.url, { transports: ["websocket"], reconnection: false, auth: { token: cookie.split("=")[1] } });
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", () => resolve());
      socket.once("connect_error", reject);
    });
    const closed = new Promise<string>((resolve) => socket.once("disconnect", (reason) => resolve(reason)));
    const logout = await fetch(`${test.url}/api/trpc/auth.logout`, { method: "POST", headers: { cookie, origin: test.url, "content-type": "application/json" }, body: "{}" });
    expect(logout.status).toBe(200);
    expect(await closed).toBe("io server disconnect");
  });
});
