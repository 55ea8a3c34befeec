// The wire contract over real HTTP: plain JSON in and out, clear 4xx errors for bad input.
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { io } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IDLE_CONNECTION_TIMEOUT_MS } from "../server/http.ts";
import { AGENT_KEY } from "./harness.ts";
import { operatorClient } from "./clients.ts";
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

  it("wire: args null (LangGraph's interrupt(null)) is stored as the JSON value null, and comes back as null", async () => {
    const { body } = await callHttp(test.url, "session.open", "mutation", {}, agent);
    const begun = await callHttp(test.url, "request.begin", "mutation", { sessionId: body.result.data.sessionId, agent: "a" }, agent);
    const requestId = begun.body.result.data.requestId;
    const asked = await callHttp(test.url, "approval.request", "mutation", { requestId, tool: "t", args: null, idempotencyKey: "null-args" }, agent);
    expect(asked.status).toBe(200);
    expect(asked.body.result.data.status).toBe("PENDING");
    const again = await callHttp(test.url, "approval.request", "mutation", { requestId, tool: "t", args: null, idempotencyKey: "null-args" }, agent);
    expect(again.body.result.data.approvalId).toBe(asked.body.result.data.approvalId);
    const admin = await operatorClient(test.url);
    const shown = await admin.approval.get.query({ approvalId: asked.body.result.data.approvalId });
    expect(shown).toMatchObject({ tool: "t", args: null });
    // A rule's approval keeps null as the approved arguments too, and signs them.
    await admin.policy.create.mutate({ name: "null args auto", match: { tool: "t-auto" }, outcome: "approve" });
    const ruled = await callHttp(test.url, "approval.request", "mutation", { requestId, tool: "t-auto", args: null }, agent);
    expect(ruled.body.result.data).toMatchObject({ status: "APPROVED", decision: { receipt: expect.any(String) } });
    expect(await admin.approval.get.query({ approvalId: ruled.body.result.data.approvalId })).toMatchObject({ args: null, approvedArgs: null, status: "APPROVED" });
    // No args at all is still a 400 that names the field.
    const missing = await callHttp(test.url, "approval.request", "mutation", { requestId, tool: "t" }, agent);
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toMatch(/args/);
  });

  it("wire: an unknown procedure is 404", async () => {
    const response = await callHttp(test.url, "nothing.here", "query", {}, agent);
    expect(response.status).toBe(404);
    // Names every object has are no procedure either.
    for (const name of ["constructor", "__proto__", "toString"]) {
      expect((await callHttp(test.url, name, "mutation", {}, agent)).status, name).toBe(404);
      expect((await callHttp(test.url, name, "query", {}, agent)).status, name).toBe(404);
    }
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

/** One answer as the client sees it: what the wire format promises, and how the body was framed. */
interface Answer {
  status: number;
  headers: { contentType?: string; vary?: string; retryAfter?: string; setCookie?: string[] };
  /** Declared length (an answer written whole) or chunked (one streamed). */
  framing: "length" | "chunked";
  body: unknown;
}

/**
 * Calls a procedure over a raw connection. `viaAdapter` sends it as only
 * tRPC's own adapter takes it (a mutation's body chunked, of no declared
 * length; a query with a content type other than JSON, which tRPC reads as
 * JSON); otherwise it is an ordinary call, which the single-call handler answers.
 */
function rawCall(url: string, procedure: string, kind: "query" | "mutation", input: string | undefined, headers: Record<string, string>, viaAdapter: boolean): Promise<Answer> {
  const target = new URL(`${url}/api/trpc/${procedure}`);
  if (kind === "query" && input !== undefined) target.searchParams.set("input", input);
  return new Promise((resolve, reject) => {
    const req = httpRequest(target, {
      method: kind === "query" ? "GET" : "POST",
      headers: {
        ...headers,
        ...(kind === "mutation" ? { "content-type": "application/json" } : viaAdapter ? { "content-type": "text/plain" } : {}),
        ...(kind === "mutation" && !viaAdapter ? { "content-length": String(Buffer.byteLength(input ?? "")) } : {}),
      },
    });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({
          status: res.statusCode!,
          headers: {
            contentType: res.headers["content-type"],
            vary: res.headers.vary,
            retryAfter: res.headers["retry-after"],
            setCookie: res.headers["set-cookie"],
          },
          framing: res.headers["transfer-encoding"] === "chunked" ? "chunked" : "length",
          body: JSON.parse(Buffer.concat(chunks).toString("utf8")),
        }),
      );
    });
    req.on("error", reject);
    if (kind === "mutation") {
      // Written after the headers, so a chunked body is sent as chunks of no declared length.
      req.flushHeaders();
      req.write(input ?? "");
    }
    req.end();
  });
}

describe("single calls: the same answers as tRPC's adapter", () => {
  const agent = { authorization: `Bearer ${AGENT_KEY}` };
  const cases: { name: string; procedure: string; kind: "query" | "mutation"; input: () => string | undefined; headers?: Record<string, string> }[] = [];
  let requestId = "";
  beforeAll(async () => {
    const session = await callHttp(test.url, "session.open", "mutation", { title: "wire" }, agent);
    const begun = await callHttp(test.url, "request.begin", "mutation", { sessionId: session.body.result.data.sessionId, agent: "a" }, agent);
    requestId = begun.body.result.data.requestId;
  });
  cases.push(
    { name: "a mutation's output", procedure: "request.trace", kind: "mutation", input: () => JSON.stringify({ requestId, events: [{ type: "step" }] }) },
    { name: "a query's output", procedure: "request.load", kind: "query", input: () => JSON.stringify({ requestId }) },
    { name: "invalid input, with zod's issues", procedure: "session.open", kind: "mutation", input: () => JSON.stringify({ title: 42 }) },
    { name: "no credentials", procedure: "session.open", kind: "mutation", input: () => "{}", headers: {} },
    { name: "a domain refusal", procedure: "request.complete", kind: "mutation", input: () => JSON.stringify({ requestId: "req_absent" }) },
    { name: "a query's refusal", procedure: "approval.await", kind: "query", input: () => JSON.stringify({ approvalId: "apr_absent", timeoutMs: 0 }) },
    { name: "a query without input", procedure: "request.load", kind: "query", input: () => undefined },
    { name: "text that cannot be stored", procedure: "session.open", kind: "mutation", input: () => JSON.stringify({ title: "bad\u0000title" }) },
    { name: "a login refused", procedure: "auth.login", kind: "mutation", input: () => JSON.stringify({ email: "nobody@example.com", password: "wrong password" }), headers: {} },
  );

  it.each(cases)("$name", async ({ procedure, kind, input, headers = agent }) => {
    const single = await rawCall(test.url, procedure, kind, input(), headers, false);
    const adapter = await rawCall(test.url, procedure, kind, input(), headers, true);
    // The two routes were taken: tRPC's adapter streams its answers, the single-call handler writes them whole.
    expect(adapter.framing).toBe("chunked");
    expect(single.framing).toBe("length");
    expect({ ...single, framing: undefined }).toEqual({ ...adapter, framing: undefined });
  });
});

describe("connections", () => {
  it("connections: an idle connection is kept open longer than a load balancer keeps its own, and the server says so", async () => {
    // A client reusing a connection the server is closing at that moment gets ECONNRESET, not an answer.
    const keepAlive = await new Promise<string | undefined>((resolve, reject) => {
      const req = httpRequest(`${test.url}/healthz`, { agent: new HttpAgent({ keepAlive: true }) }, (res) => {
        res.resume();
        res.on("end", () => resolve(String(res.headers["keep-alive"])));
      });
      req.on("error", reject);
      req.end();
    });
    expect(keepAlive).toBe(`timeout=${IDLE_CONNECTION_TIMEOUT_MS / 1000}`);
    expect(IDLE_CONNECTION_TIMEOUT_MS).toBeGreaterThan(60_000);
  });
});
