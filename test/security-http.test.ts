// The findings of the security review, refused over real HTTP: password
// guessing, cross-site requests with the session cookie, bodies that are not
// JSON, missing security headers, cookies without Secure behind HTTPS, and
// text that is not valid Unicode.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addPerson, operatorClient, type OperatorClient } from "./clients.ts";
import { ADMIN, AGENT_KEY } from "./harness.ts";
import { callHttp, startTestServer, type TestServer } from "./server.ts";

let test: TestServer;
let admin: OperatorClient;
const agent = { authorization: `Bearer ${AGENT_KEY}` };

/**
 * Stops the server's clock, which the login throttle's windows run on: the
 * tests step through its waits instead of sleeping, so a slow machine cannot
 * let a guess slip through a window that ran out between two requests.
 */
function stopClock(server: TestServer) {
  let nowMs = Date.now();
  server.server.deps.now = () => new Date(nowMs);
  return { advanceSeconds: (seconds: number) => (nowMs += seconds * 1000) };
}
let clock: ReturnType<typeof stopClock>;

beforeAll(async () => {
  // Behind a (pretend) proxy, so each test can speak from its own addresses.
  test = await startTestServer({ TOLLGATE_TRUST_PROXY: "true" });
  clock = stopClock(test);
  admin = await operatorClient(test.url);
});
afterAll(async () => {
  await test.close();
});

let addressCount = 0;
/** A client address no other test uses. */
const newAddress = () => `10.${Math.floor(++addressCount / 250)}.${addressCount % 250}.${Math.floor(Math.random() * 250)}`;
const unknownEmail = () => `nobody-${randomUUID().slice(0, 8)}@example.com`;

function login(url: string, email: string, password: string, headers: Record<string, string> = {}) {
  return fetch(`${url}/api/trpc/auth.login`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ email, password }),
  });
}

async function createOperator(): Promise<{ email: string; password: string }> {
  const email = `op-${randomUUID().slice(0, 8)}@example.com`;
  const password = `pw-${randomUUID()}`;
  await addPerson(test.url, admin, { email, name: "Throttled operator", role: "OPERATOR", password });
  return { email, password };
}

const sessionCookie = async (url: string) => {
  const response = await login(url, ADMIN.email, ADMIN.password, { "x-forwarded-for": newAddress() });
  expect(response.status).toBe(200);
  return (response.headers.get("set-cookie") ?? "").split(";")[0]!;
};

describe("login throttling", () => {
  it("throttle: after five failures for one account from one address, its guesses there get 429 with Retry-After", async () => {
    const email = unknownEmail();
    const address = newAddress();
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let guess = 0; guess < 10; guess++) {
      const response = await login(test.url, email, `guess-${guess}`, { "x-forwarded-for": address });
      statuses.push(response.status);
      if (response.status === 429) refused ??= response;
      else await response.body?.cancel();
    }
    // Five free failures, then one attempt that opens a one-second wait.
    expect(statuses.slice(0, 6)).toEqual([401, 401, 401, 401, 401, 401]);
    expect(statuses.slice(6).every((status) => status === 429)).toBe(true);
    expect(refused!.headers.get("retry-after")).toBe("1");
    const body = await refused!.json();
    expect(body.error.message).toMatch(new RegExp(`too many failed logins for ${email} from ${address}; try again in 1 second \\(after \\d{4}-`));
    expect(body.error.data).toMatchObject({ code: "TOO_MANY_REQUESTS", httpStatus: 429 });
  });

  it("throttle: guesses at one account spread over many addresses are held back by the softer account limit (twenty free)", async () => {
    const email = unknownEmail();
    const statuses: number[] = [];
    for (let guess = 0; guess < 30; guess++) statuses.push((await login(test.url, email, `guess-${guess}`, { "x-forwarded-for": newAddress() })).status);
    expect(statuses.slice(0, 21).every((status) => status === 401)).toBe(true);
    expect(statuses.slice(21).every((status) => status === 429)).toBe(true);
  });

  it("throttle: the wait doubles with every further failure", async () => {
    const email = unknownEmail();
    const address = newAddress();
    for (let guess = 0; guess < 6; guess++) await login(test.url, email, "wrong", { "x-forwarded-for": address });
    const first = await login(test.url, email, "wrong", { "x-forwarded-for": address });
    expect(first.status).toBe(429);
    expect(first.headers.get("retry-after")).toBe("1");
    clock.advanceSeconds(1);
    expect((await login(test.url, email, "wrong", { "x-forwarded-for": address })).status).toBe(401);
    const second = await login(test.url, email, "wrong", { "x-forwarded-for": address });
    expect(second.status).toBe(429);
    expect(second.headers.get("retry-after")).toBe("2");
  });

  it("throttle: concurrent guesses are counted before the password is checked, so only a handful are verified", async () => {
    const email = unknownEmail();
    const address = newAddress();
    const responses = await Promise.all(Array.from({ length: 60 }, (_, guess) => login(test.url, email, `guess-${guess}`, { "x-forwarded-for": address })));
    const statuses = responses.map((response) => response.status);
    // The five free ones and the one that opens the first wait (the clock stands still).
    expect(statuses.filter((status) => status === 401)).toHaveLength(6);
    expect(statuses.filter((status) => status === 429)).toHaveLength(54);
  });

  it("throttle: while the account waits at an address even the right password is refused there; after the wait it logs in", async () => {
    const operator = await createOperator();
    const address = newAddress();
    for (let guess = 0; guess < 6; guess++) await login(test.url, operator.email, "wrong", { "x-forwarded-for": address });
    const refused = await login(test.url, operator.email, operator.password, { "x-forwarded-for": address });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("set-cookie")).toBeNull();
    clock.advanceSeconds(Number(refused.headers.get("retry-after")));
    expect((await login(test.url, operator.email, operator.password, { "x-forwarded-for": address })).status).toBe(200);
  });

  it("throttle: a successful login resets the count of failures for the account at that address", async () => {
    const operator = await createOperator();
    const address = newAddress();
    for (let guess = 0; guess < 5; guess++) {
      expect((await login(test.url, operator.email, "wrong", { "x-forwarded-for": address })).status).toBe(401);
    }
    expect((await login(test.url, operator.email, operator.password, { "x-forwarded-for": address })).status).toBe(200);
    for (let guess = 0; guess < 5; guess++) {
      expect((await login(test.url, operator.email, "wrong", { "x-forwarded-for": address })).status).toBe(401);
    }
  });

  it("throttle: a guesser elsewhere cannot lock out a person whose browser signed in before (its device cookie)", async () => {
    const operator = await createOperator();
    const first = await login(test.url, operator.email, operator.password, { "x-forwarded-for": newAddress() });
    expect(first.status).toBe(200);
    const device = (first.headers.getSetCookie().find((cookie) => cookie.startsWith("tollgate_device=")) ?? "").split(";")[0]!;
    expect(first.headers.getSetCookie().find((cookie) => cookie.startsWith("tollgate_device="))).toMatch(/HttpOnly; SameSite=Strict/i);
    // A guesser from many addresses exhausts the account's limit for browsers it does not know
    // (until it is refused twice in a row: the waits have grown past the next few calls).
    let refusedInARow = 0;
    for (let guess = 0; guess < 60 && refusedInARow < 2; guess++) {
      const status = (await login(test.url, operator.email, `guess-${guess}`, { "x-forwarded-for": newAddress() })).status;
      refusedInARow = status === 429 ? refusedInARow + 1 : 0;
    }
    expect((await login(test.url, operator.email, operator.password, { "x-forwarded-for": newAddress() })).status).toBe(429);
    // The person's own browser still signs in, from anywhere.
    expect((await login(test.url, operator.email, operator.password, { "x-forwarded-for": newAddress(), cookie: device })).status).toBe(200);
    // A device cookie of another account, or a forged one, counts for nothing.
    const other = await createOperator();
    expect((await login(test.url, other.email, other.password, { "x-forwarded-for": newAddress(), cookie: device })).status).toBe(200);
    const forged = `tollgate_device=${device.split("=")[1]!.split(".")[0]}.${"A".repeat(43)}`;
    expect((await login(test.url, operator.email, operator.password, { "x-forwarded-for": newAddress(), cookie: forged })).status).toBe(429);
  });

  it("throttle: one address guessing at many accounts is throttled by address, but does not lock out a known browser at that address", async () => {
    const operator = await createOperator();
    const known = await login(test.url, operator.email, operator.password, { "x-forwarded-for": newAddress() });
    const device = (known.headers.getSetCookie().find((cookie) => cookie.startsWith("tollgate_device=")) ?? "").split(";")[0]!;
    const address = newAddress();
    const statuses: number[] = [];
    for (let guess = 0; guess < 24; guess++) statuses.push((await login(test.url, unknownEmail(), "wrong", { "x-forwarded-for": address })).status);
    expect(statuses.slice(0, 21).every((status) => status === 401)).toBe(true);
    expect(statuses.slice(21)).toEqual([429, 429, 429]);
    const refused = await login(test.url, unknownEmail(), "wrong", { "x-forwarded-for": address });
    expect((await refused.json()).error.message).toMatch(`too many failed logins from ${address}`);
    // Another address is not held back, nor is a browser that signed in before, even at this address.
    expect((await login(test.url, unknownEmail(), "wrong", { "x-forwarded-for": newAddress() })).status).toBe(401);
    expect((await login(test.url, operator.email, operator.password, { "x-forwarded-for": address, cookie: device })).status).toBe(200);
  });

  it("throttle: behind a trusted proxy only the last X-Forwarded-For hop counts, so a client cannot pick its address", async () => {
    const proxyHop = newAddress();
    const statuses: number[] = [];
    for (let guess = 0; guess < 23; guess++) {
      statuses.push((await login(test.url, unknownEmail(), "wrong", { "x-forwarded-for": `${newAddress()}, ${proxyHop}` })).status);
    }
    expect(statuses.slice(21)).toEqual([429, 429]);
  });

  it("throttle: without TOLLGATE_TRUST_PROXY, X-Forwarded-For is ignored and the socket's address counts", async () => {
    const direct = await startTestServer();
    stopClock(direct);
    try {
      const statuses: number[] = [];
      for (let guess = 0; guess < 23; guess++) {
        statuses.push((await login(direct.url, unknownEmail(), "wrong", { "x-forwarded-for": newAddress() })).status);
      }
      expect(statuses.slice(21)).toEqual([429, 429]);
      const refused = await login(direct.url, unknownEmail(), "wrong");
      expect((await refused.json()).error.message).toMatch("too many failed logins from 127.0.0.1");
    } finally {
      await direct.close();
    }
  });

  it("throttle: failed logins are audited with the email and address, never the password", async () => {
    const operator = await createOperator();
    const address = newAddress();
    const password = `secret-guess-${randomUUID()}`;
    await login(test.url, operator.email, password, { "x-forwarded-for": address });
    const unknown = unknownEmail();
    await login(test.url, unknown, password, { "x-forwarded-for": address });
    const { items } = await admin.audit.list.query({ action: "operator.login_failed", limit: 50 });
    const mine = items.filter((entry) => (entry.data as { address?: string }).address === address);
    expect(mine.map((entry) => entry.data)).toEqual([
      { email: unknown, address, reason: "unknown_email" },
      { email: operator.email, address, reason: "wrong_password" },
    ]);
    expect(JSON.stringify(items)).not.toContain(password);
  });

  it("throttle: auth.login cannot be sent in a batch, alone or with other calls", async () => {
    for (const paths of ["auth.login,auth.login", "auth.me,auth.login"]) {
      const response = await fetch(`${test.url}/api/trpc/${paths}?batch=1`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ 0: { email: ADMIN.email, password: "a" }, 1: { email: ADMIN.email, password: "b" } }),
      });
      expect(response.status).toBe(400);
      expect((await response.json()).error.message).toBe("auth.login cannot be called in a batch; call it on its own");
    }
  });
});

describe("cross-site requests", () => {
  it("csrf: a mutation with a form or text body is 415 naming application/json, and nothing is issued", async () => {
    const cookie = await sessionCookie(test.url);
    const before = await admin.audit.list.query({ action: "operator.token_issued", limit: 100 });
    const form = new FormData();
    form.set("ttlHours", "24");
    const multipart = await fetch(`${test.url}/api/trpc/auth.createToken`, { method: "POST", headers: { cookie, origin: test.url }, body: form });
    expect(multipart.status).toBe(415);
    expect((await multipart.json()).error.message).toMatch(/send content-type: application\/json \(not multipart\/form-data\)/);
    for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
      const response = await fetch(`${test.url}/api/trpc/auth.createToken`, { method: "POST", headers: { cookie, origin: test.url, "content-type": type }, body: "ttlHours=24" });
      expect(response.status).toBe(415);
    }
    const after = await admin.audit.list.query({ action: "operator.token_issued", limit: 100 });
    expect(after.items.length).toBe(before.items.length);
  });

  it("csrf: a JSON body sent as application/octet-stream is 415, not silently read as no input", async () => {
    const response = await fetch(`${test.url}/api/trpc/session.open`, {
      method: "POST",
      headers: { ...agent, "content-type": "application/octet-stream" },
      body: JSON.stringify({ title: "as octets" }),
    });
    expect(response.status).toBe(415);
    expect((await response.json()).error.message).toMatch(/application\/json \(not application\/octet-stream\)/);
    const bare = await fetch(`${test.url}/api/trpc/session.open`, { method: "POST", headers: agent, body: "{}" });
    expect(bare.status).toBe(415);
  });

  it("csrf: a cookie mutation needs the console's own origin (Origin or Sec-Fetch-Site), else 403", async () => {
    const cookie = await sessionCookie(test.url);
    const call = (headers: Record<string, string>) =>
      fetch(`${test.url}/api/trpc/auth.createToken`, { method: "POST", headers: { cookie, "content-type": "application/json", ...headers }, body: JSON.stringify({ ttlHours: 1, password: ADMIN.password }) });

    const missing = await call({});
    expect(missing.status).toBe(403);
    expect((await missing.json()).error.message).toMatch(/Origin header/);
    const foreign = await call({ origin: "http://evil.example" });
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).error.message).toMatch(/not http:\/\/evil\.example/);
    expect((await call({ origin: "null" })).status).toBe(403);
    expect((await call({ "sec-fetch-site": "same-site" })).status).toBe(403);

    expect((await call({ origin: test.url })).status).toBe(200);
    expect((await call({ "sec-fetch-site": "same-origin" })).status).toBe(200);
  });

  it("csrf: bearer calls (agent key, operator token) from other services need no Origin", async () => {
    expect((await callHttp(test.url, "session.open", "mutation", { title: "service" }, agent)).status).toBe(200);
    const { token } = await admin.auth.createToken.mutate({ ttlHours: 1, password: ADMIN.password });
    const tokenCall = await callHttp(test.url, "auth.createToken", "mutation", { ttlHours: 1, password: ADMIN.password }, { authorization: `Bearer ${token}` });
    expect(tokenCall.status).toBe(200);
  });

  it("csrf: a page on another origin cannot log its visitor in", async () => {
    const response = await login(test.url, ADMIN.email, ADMIN.password, { origin: "http://evil.example" });
    expect(response.status).toBe(403);
    expect(response.headers.get("set-cookie")).toBeNull();
  });
});

describe("headers and cookies", () => {
  it("headers: every response forbids framing and sniffing, and one that is not a console page carries a CSP that allows no content", async () => {
    const responses = await Promise.all([
      fetch(`${test.url}/healthz`),
      fetch(`${test.url}/.well-known/jwks.json`),
      fetch(`${test.url}/api/trpc/auth.me`),
      fetch(`${test.url}/nothing-here`),
      fetch(`${test.url}/api/trpc/session.open`, { method: "POST", headers: { "content-type": "text/plain" }, body: "x" }),
      fetch(`${test.url}/socket.io/?EIO=4&transport=polling`),
    ]);
    for (const response of responses) {
      await response.body?.cancel();
      expect(response.headers.get("x-frame-options")).toBe("DENY");
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      expect(response.headers.get("referrer-policy")).toBe("strict-origin-when-cross-origin");
      expect(response.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
    }
  });

  it("cookies: the session cookie is Secure when a trusted proxy says the request came over HTTPS", async () => {
    const plain = await login(test.url, ADMIN.email, ADMIN.password, { "x-forwarded-for": newAddress() });
    expect(plain.headers.get("set-cookie")).not.toMatch(/;\s*Secure/i);
    const proxied = await login(test.url, ADMIN.email, ADMIN.password, { "x-forwarded-for": newAddress(), "x-forwarded-proto": "https" });
    expect(proxied.headers.get("set-cookie")).toMatch(/;\s*Secure/i);
  });

  it("cookies: without TOLLGATE_TRUST_PROXY a client's X-Forwarded-Proto is not believed", async () => {
    const direct = await startTestServer();
    stopClock(direct);
    try {
      const response = await login(direct.url, ADMIN.email, ADMIN.password, { "x-forwarded-proto": "https" });
      expect(response.status).toBe(200);
      expect(response.headers.get("set-cookie")).not.toMatch(/;\s*Secure/i);
    } finally {
      await direct.close();
    }
  });
});

describe("text that is not valid Unicode", () => {
  // Written by hand: JSON.stringify would keep the escapes, but a test should show the wire.
  const post = (procedure: string, body: string) =>
    fetch(`${test.url}/api/trpc/${procedure}`, { method: "POST", headers: { ...agent, "content-type": "application/json" }, body });

  async function begin() {
    const { body } = await callHttp(test.url, "session.open", "mutation", {}, agent);
    const begun = await callHttp(test.url, "request.begin", "mutation", { sessionId: body.result.data.sessionId, agent: "a" }, agent);
    return { sessionId: body.result.data.sessionId as string, requestId: begun.body.result.data.requestId as string };
  }

  it("unicode: a lone surrogate anywhere in a JSON input is 400 naming the field path", async () => {
    const { sessionId, requestId } = await begin();
    const cases: [string, string, RegExp][] = [
      ["request.begin", `{"sessionId":"${sessionId}","agent":"a","input":{"args":{"note":"\\ud800x"}}}`, /^invalid input: input\.args\.note contains a lone UTF-16 surrogate/],
      ["request.begin", `{"sessionId":"${sessionId}","agent":"a","input":["ok","\\udc00"]}`, /^invalid input: input\.1 contains a lone UTF-16 surrogate/],
      ["approval.request", `{"requestId":"${requestId}","tool":"t","args":{"note":"x\\udbff"}}`, /^invalid input: args\.note contains a lone UTF-16 surrogate/],
      ["approval.request", `{"requestId":"${requestId}","tool":"t","args":{"\\ud800key":1}}`, /^invalid input: a key in args contains a lone UTF-16 surrogate/],
      ["request.complete", `{"requestId":"${requestId}","output":{"text":"\\ude00"}}`, /^invalid input: output\.text contains a lone UTF-16 surrogate/],
      ["session.open", `{"title":"a\\u0000b"}`, /^invalid input: title contains a NUL character/],
    ];
    for (const [procedure, body, message] of cases) {
      const response = await post(procedure, body);
      expect(response.status, `${procedure} ${body}`).toBe(400);
      expect((await response.json()).error.message).toMatch(message);
    }
    // Nothing was half written: the request can still complete.
    expect((await callHttp(test.url, "request.complete", "mutation", { requestId, output: { ok: true } }, agent)).status).toBe(200);
  });

  it("unicode: surrogate pairs (emoji) and text that merely spells an escape are accepted", async () => {
    const { sessionId } = await begin();
    const response = await post("request.begin", `{"sessionId":"${sessionId}","agent":"a","input":{"note":"\\ud83d\\ude00 and \\\\ud800 and \\\\u0000"}}`);
    expect(response.status).toBe(200);
  });

  it("unicode: a lone surrogate in a query's input is 400 too", async () => {
    const response = await fetch(`${test.url}/api/trpc/approval.await?input=${encodeURIComponent('{"timeoutMs":0,"approvalId":"apr_')}%5Cud800${encodeURIComponent('"}')}`, {
      headers: agent,
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toMatch(/approvalId contains a lone UTF-16 surrogate/);
  });
});
