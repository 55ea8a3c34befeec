// Shared steps of the browser tests: the agent side over plain HTTP (in the test
// or as a separate process), operator accounts through the admin API, logging in,
// and the final screenshot every test keeps.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { expect, request as playwrightRequest, type Browser, type Page, type TestInfo } from "@playwright/test";
import { ADMIN_EMAIL, ADMIN_PASSWORD, AGENT_KEY, BASE_URL } from "./fixtures";

export const unique = (prefix: string) => `${prefix}_${randomUUID().slice(0, 8)}`;

/** A call as an agent service makes it: JSON over HTTP with the bearer agent key. */
export async function agentCall<T = Record<string, unknown>>(path: string, input: unknown, method: "POST" | "GET" = "POST"): Promise<T> {
  const target = method === "GET" ? `${BASE_URL}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}` : `${BASE_URL}/api/trpc/${path}`;
  const response = await fetch(target, {
    method,
    headers: { Authorization: `Bearer ${AGENT_KEY}`, "Content-Type": "application/json" },
    body: method === "GET" ? undefined : JSON.stringify(input),
  });
  const body = (await response.json()) as { result?: { data: T }; error?: { message: string } };
  if (!response.ok || !body.result) throw new Error(`${path} failed (${response.status}): ${body.error?.message ?? JSON.stringify(body)}`);
  return body.result.data;
}

export interface PendingApproval {
  sessionId: string;
  taskId: string;
  requestId: string;
  approvalId: string;
}

/** Opens a session (or reuses one), begins a request and asks for approval of one tool call. */
export async function requestApproval(options: {
  tool: string;
  args?: unknown;
  reason?: string;
  sessionId?: string;
  title?: string;
  agent?: string;
  allow?: ("approve" | "reject" | "edit" | "respond")[];
}): Promise<PendingApproval> {
  const sessionId = options.sessionId ?? (await agentCall<{ sessionId: string }>("session.open", { title: options.title ?? unique("session") })).sessionId;
  const begun = await agentCall<{ taskId: string; requestId: string }>("request.begin", { sessionId, agent: options.agent ?? "billing-agent" });
  const approval = await agentCall<{ approvalId: string }>("approval.request", {
    requestId: begun.requestId,
    tool: options.tool,
    args: options.args ?? { amount: 42, currency: "EUR" },
    reason: options.reason ?? `needs a human to run ${options.tool}`,
    ...(options.allow ? { allow: options.allow } : {}),
  });
  return { sessionId, taskId: begun.taskId, requestId: begun.requestId, approvalId: approval.approvalId };
}

export interface AwaitResult {
  status: string;
  decision?: { action: string; args?: unknown; message?: string; decidedBy: string };
}

export const awaitDecision = (approvalId: string, timeoutMs = 5_000) => agentCall<AwaitResult>("approval.await", { approvalId, timeoutMs }, "GET");

/**
 * An agent waiting on each approval, as a framework adapter does: long-poll
 * after long-poll until it is decided, or for `forMs` (a test's limit). The
 * server cuts a long-poll to a few seconds under the tests' 5 s liveness
 * window, so one long-poll would leave the screen saying no agent waits while
 * a test on a busy machine is still reading it.
 */
export function agentWaits(approvalIds: string[], forMs = 90_000): void {
  const until = Date.now() + forMs;
  for (const approvalId of approvalIds) {
    void (async () => {
      while (Date.now() < until) {
        const answer = await awaitDecision(approvalId, 25_000).catch(() => undefined);
        if (answer && answer.status !== "PENDING") return;
      }
    })();
  }
}

/** Adds an operator as an admin does: invited through the admin's API (operator.create), the invitation accepted with their password. */
export async function createOperator(role: "ADMIN" | "OPERATOR" | "VIEWER") {
  // Sends what the console's pages send: the session cookie only goes with its own origin.
  const admin = await playwrightRequest.newContext({ baseURL: BASE_URL, extraHTTPHeaders: { origin: BASE_URL } });
  try {
    const login = await admin.post("/api/trpc/auth.login", { data: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    expect(login.status(), await login.text()).toBe(200);
    const email = `${unique(role.toLowerCase())}@example.com`;
    const password = `pw-${randomUUID()}`;
    const name = `${role[0]}${role.slice(1).toLowerCase()} ${email.slice(0, 14)}`;
    const created = await admin.post("/api/trpc/operator.create", { data: { email, name, role } });
    expect(created.status(), await created.text()).toBe(200);
    const link = ((await created.json()) as { result: { data: { link: string } } }).result.data.link;
    const accepted = await admin.post("/api/trpc/auth.acceptInvitation", { data: { token: link.slice(link.indexOf("#") + 1), password } });
    expect(accepted.status(), await accepted.text()).toBe(200);
    return { email, password, name };
  } finally {
    await admin.dispose();
  }
}

/** The admin's API (cookie session), for arranging rules around a test. */
export async function adminApi() {
  // Sends what the console's pages send: the session cookie only goes with its own origin.
  const context = await playwrightRequest.newContext({ baseURL: BASE_URL, extraHTTPHeaders: { origin: BASE_URL } });
  const login = await context.post("/api/trpc/auth.login", { data: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
  expect(login.status(), await login.text()).toBe(200);
  return {
    async call<T>(path: string, input: unknown): Promise<T> {
      const response = await context.post(`/api/trpc/${path}`, { data: input });
      expect(response.status(), await response.text()).toBe(200);
      return ((await response.json()) as { result: { data: T } }).result.data;
    },
    async query<T>(path: string, input?: unknown): Promise<T> {
      const response = await context.get(`/api/trpc/${path}`, input === undefined ? {} : { params: { input: JSON.stringify(input) } });
      expect(response.status(), await response.text()).toBe(200);
      return ((await response.json()) as { result: { data: T } }).result.data;
    },
    async rules() {
      const response = await context.get("/api/trpc/policy.list");
      return ((await response.json()) as { result: { data: { items: { policyId: string; name: string; sourceApprovalId: string | null }[] } } }).result.data.items;
    },
    dispose: () => context.dispose(),
  };
}

/**
 * Waits until the login form is interactive (hydrated; its button is enabled
 * then): what is typed into it before that can be lost.
 */
export async function loginFormReady(page: Page) {
  await expect(page.getByRole("button", { name: "Log in" })).toBeEnabled();
}

/**
 * Logs in through the API in the page's own browser context (the session cookie
 * lands in its cookie jar), then opens `path` and waits for the live
 * connection. The login form has tests of its own (smoke, security, the
 * console's CSP test use `logInWithForm`); loading and hydrating it again in
 * every test was a page load each.
 */
export async function logIn(page: Page, email = ADMIN_EMAIL, password = ADMIN_PASSWORD, path = "/") {
  // Sends what the login page sends: the session cookie only goes with its own origin.
  const login = await page.request.post("/api/trpc/auth.login", { data: { email, password }, headers: { origin: BASE_URL } });
  expect(login.status(), await login.text()).toBe(200);
  await page.goto(path);
  await loggedInAndLive(page);
}

/** Logs in as an operator does: the login form, typed into once it is interactive, then `path`. */
export async function logInWithForm(page: Page, email = ADMIN_EMAIL, password = ADMIN_PASSWORD, path = "/") {
  await page.goto(`/login?next=${encodeURIComponent(path)}`);
  await loginFormReady(page);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Log in" }).click();
  await loggedInAndLive(page);
}

/**
 * The console shows who is logged in, and its live connection is up. A first
 * page in a new browser context loads and compiles every script afresh: beside
 * the integration passes on two cores that has taken more than the 10 s an
 * expectation waits by default (the screen still said "Loading…").
 */
async function loggedInAndLive(page: Page) {
  await expect(page.getByTestId("operator-identity")).toBeVisible({ timeout: 30_000 });
  await expect(page.getByRole("status", { name: "Connection: Live" })).toBeVisible();
}

/** The inbox row of one approval (by tool and agent; tests use unique tool names). */
export const inboxRow = (page: Page, tool: string, agent = "billing-agent") => page.getByRole("button", { name: `Open ${tool} by ${agent}` });

/** Saves the final screen as an artifact of the test (besides Playwright's own). */
export async function finalScreenshot(page: Page, testInfo: TestInfo, name = "final") {
  await testInfo.attach(name, { body: await page.screenshot(), contentType: "image/png" });
}

/** A screenshot attached to the report and kept as `<name>.png` in the test's output folder, to be looked at. */
export async function keepScreenshot(page: Page, testInfo: TestInfo, name: string) {
  await testInfo.attach(name, { body: await page.screenshot({ path: testInfo.outputPath(`${name}.png`) }), contentType: "image/png" });
}

export interface AgentEvent {
  event: string;
  [key: string]: unknown;
}

/** The chain agent (e2e/agents/chain-agent.mjs) as a separate process, with its stdout as events. */
export class AgentProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly events: AgentEvent[] = [];
  private readonly waiters: (() => void)[] = [];
  private stderr = "";

  constructor(env: Record<string, string>) {
    const script = fileURLToPath(new URL("./agents/chain-agent.mjs", import.meta.url));
    this.child = spawn(process.execPath, [script], {
      env: { ...process.env, TOLLGATE_URL: BASE_URL, TOLLGATE_AGENT_KEY: AGENT_KEY, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let buffer = "";
    this.child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      let newline: number;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line.trim()) this.events.push(JSON.parse(line) as AgentEvent);
        this.waiters.splice(0).forEach((wake) => wake());
      }
    });
    this.child.stderr.on("data", (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.child.on("exit", () => this.waiters.splice(0).forEach((wake) => wake()));
  }

  /** Resolves with the first event of this name; fails on the agent's error or exit. */
  async next(event: string, timeoutMs = 15_000): Promise<AgentEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find((candidate) => candidate.event === event);
      if (found) return found;
      const failed = this.events.find((candidate) => candidate.event === "error");
      if (failed) throw new Error(`agent failed: ${String(failed.message)}`);
      if (this.child.exitCode !== null) throw new Error(`agent exited (${this.child.exitCode}) before "${event}": ${this.stderr}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`agent did not report "${event}" within ${timeoutMs} ms; saw ${JSON.stringify(this.events)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 500));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  has(event: string): boolean {
    return this.events.some((candidate) => candidate.event === event);
  }

  finish() {
    this.child.stdin.write("finish\n");
  }

  stop() {
    if (this.child.exitCode === null) this.child.kill();
  }
}

/** Many calls of one agent procedure in tRPC HTTP batches (for building large fixtures quickly). */
export async function agentBatch<T = Record<string, unknown>>(path: string, inputs: unknown[], chunk = 100): Promise<T[]> {
  const results: T[] = [];
  for (let start = 0; start < inputs.length; start += chunk) {
    const slice = inputs.slice(start, start + chunk);
    const body = Object.fromEntries(slice.map((input, index) => [String(index), input]));
    const response = await fetch(`${BASE_URL}/api/trpc/${slice.map(() => path).join(",")}?batch=1`, {
      method: "POST",
      headers: { Authorization: `Bearer ${AGENT_KEY}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const items = (await response.json()) as { result?: { data: T }; error?: { message: string } }[];
    for (const item of items) {
      if (!item.result) throw new Error(`${path} failed in a batch: ${item.error?.message ?? JSON.stringify(item)}`);
      results.push(item.result.data);
    }
  }
  return results;
}

/** Sends at once a decision waiting in the page's outbox (its notice's "Send now"), rather than after the undo window. */
export async function sendNow(page: Page, subject?: string) {
  const waiting = page.getByTestId("decision-toast").filter({ has: page.getByRole("button", { name: "Send now" }) });
  await (subject ? waiting.filter({ hasText: subject }) : waiting).first().getByRole("button", { name: "Send now" }).click();
}

/** Waits until the open approval's decision controls take presses (they arm after being on screen a moment). */
export async function decisionArmed(page: Page) {
  await expect(page.getByTestId("decision-bar").getByRole("button").first()).toHaveAttribute("data-armed", "true");
}

/**
 * The invitation link the People page just showed (no SMTP in the browser
 * tests), accepted in a browser of the invitee's own with `password`; the
 * page's "Done" then clears the link.
 */
export async function acceptInvitation(page: Page, browser: Browser, password: string) {
  const shown = page.getByRole("alert", { name: /Invitation link for/ });
  const link = (await shown.getByTestId("shown-once").innerText()).trim();
  const theirs = await browser.newContext();
  try {
    const invitee = await theirs.newPage();
    await invitee.goto(link);
    await invitee.getByLabel("Password").fill(password);
    await invitee.getByRole("button", { name: "Join" }).click();
    await invitee.waitForURL((url) => url.pathname === "/");
  } finally {
    await theirs.close();
  }
  await shown.getByRole("button", { name: "Done" }).click();
  await page.reload();
}
