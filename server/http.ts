// One HTTP server for everything: the tRPC API at /api/trpc, socket.io at
// /socket.io, the receipt keys at /.well-known/jwks.json, and the Next.js
// console for every other path.
import { createHash, timingSafeEqual } from "node:crypto";
import { setMaxListeners } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { TRPCError } from "@trpc/server";
import { nodeHTTPRequestHandler } from "@trpc/server/adapters/node-http";
import { parse as parseCookie, serialize as serializeCookie } from "cookie";
import { createClient } from "redis";
import { appRouter } from "./api/router.ts";
import { createSingleCallHandler } from "./api/single-call.ts";
import { DEVICE_COOKIE, DEVICE_COOKIE_DAYS, SESSION_COOKIE, type TrpcContext } from "./api/trpc.ts";
import { openDatabase, type Database } from "./db/client.ts";
import { auditDigestFile, type Env } from "./env.ts";
import { EventBus } from "./events/bus.ts";
import { bridgeBus, type Bridge } from "./events/bridge.ts";
import { postgresTransport } from "./events/postgres-transport.ts";
import { redisTransport } from "./events/redis-transport.ts";
import { AuditSealer } from "./jobs/audit-sealer.ts";
import { WorkLoop } from "./jobs/work-loop.ts";
import { analyzeChangedTables } from "./services/planner-statistics.ts";
import { expireDueApprovals, nextExpiry } from "./services/approvals/expire-approvals.ts";
import { WebhookDeliverer } from "./jobs/webhook-deliverer.ts";
import { NotificationDeliverer } from "./jobs/notification-deliverer.ts";
import { DueScheduler } from "./jobs/due-scheduler.ts";
import { escalateDueApprovals, nextEscalation } from "./services/notifications/escalate-approvals.ts";
import { createMailer } from "./net/mailer.ts";
import { API_SECURITY_HEADERS, clientAddress, consoleSecurityHeaders, newNonce, refuseTrpcRequest, requestIsHttps, type MutationCheckOptions, type Refusal } from "./http-security.ts";
import { log } from "./log.ts";
import { parseTraceparent } from "./domain/trace-context.ts";
import { startMetrics } from "./observability/metrics.ts";
import { metricsAccess } from "./observability/metrics-access.ts";
import { sealStoredWebhookSecrets } from "./services/agent-keys/agent-key-rows.ts";
import { anchorUnkeyedChains, UNKEYED_ANCHOR_MIGRATION } from "./services/audit-unkeyed-anchor.ts";
import { rewriteStoredGlobs } from "./services/policies/rewrite-stored-globs.ts";
import { checkReadiness } from "./observability/readiness.ts";
import { readMigrations } from "./db/schema-engine.ts";
import { attachRealtime, type Realtime } from "./realtime/socket.ts";
import { deriveKey, resolveServerSecret } from "./secret.ts";
import { bootstrapWorkspace, type BootstrapResult } from "./services/bootstrap.ts";
import { createOutbound, type Resolver } from "./net/outbound.ts";
import { createServiceDeps, type ServiceDeps } from "./services/deps.ts";
import { keepNativeGlobals } from "./native-globals.ts";
import { createLoginThrottle } from "./services/login-throttle.ts";
import { ReceiptSigner } from "./services/receipts.ts";

const TRPC_PREFIX = "/api/trpc";
const JWKS_PATH = "/.well-known/jwks.json";
// Large enough for a 2 MB agent state; per-field limits are set in the schemas.
const MAX_BODY_BYTES = 4 * 1024 * 1024;
// How often the tables that changed are analyzed: a check of their counters,
// and ANALYZE only where autovacuum would have run it (and had not).
const STATISTICS_EVERY_MS = 10_000;
/** How long an idle keep-alive connection stays open: longer than a load balancer's 60 s. */
export const IDLE_CONNECTION_TIMEOUT_MS = 65_000;

export interface StartOptions {
  env: Env;
  /** Serve the Next.js console (off for API-only test servers). */
  withConsole?: boolean;
  dev?: boolean;
  /** How outbound requests resolve host names (the system's DNS unless a test answers instead). */
  resolver?: Resolver;
}

export interface RunningServer {
  url: string;
  port: number;
  database: Database;
  deps: ServiceDeps;
  bootstrap: BootstrapResult;
  /** Says "not ready" on /readyz from now on, so load balancers send new traffic elsewhere; keeps serving. */
  drain(): void;
  /** Stops accepting, lets in-flight requests finish, then closes the database. */
  close(): Promise<void>;
}

/** Compared in constant time (over their digests, so lengths do not leak either). */
function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(header);
  return match?.[1]?.trim();
}

interface TrpcTransportOptions {
  /** Mark the session cookie Secure even when the request came over plain HTTP. */
  alwaysSecureCookies: boolean;
  trustProxy: boolean;
}

/** A DomainError's wait before retrying, carried on tRPC errors as their cause. */
function retryAfterSeconds(errors: readonly { cause?: unknown }[]): number | undefined {
  for (const error of errors) {
    const seconds = (error.cause as { details?: { retryAfterSeconds?: unknown } } | undefined)?.details?.retryAfterSeconds;
    if (typeof seconds === "number") return seconds;
  }
  return undefined;
}

/**
 * tRPC's calls: one query or mutation with a JSON input (the SDK's calls, the
 * console's mutations) is answered by the single-call handler, anything else
 * (batches, subscriptions) by tRPC's adapter; both speak tRPC's wire format.
 */
function createTrpcHandler(deps: ServiceDeps, options: TrpcTransportOptions) {
  const createContext = (req: IncomingMessage, res: ServerResponse): TrpcContext => ({
    deps,
    bearerToken: bearerToken(req),
    clientAddress: clientAddress(req, options),
    traceparent: parseTraceparent(req.headers.traceparent),
    sessionToken: req.headers.cookie ? parseCookie(req.headers.cookie)[SESSION_COOKIE] : undefined,
    deviceCookie: req.headers.cookie ? parseCookie(req.headers.cookie)[DEVICE_COOKIE] : undefined,
    setDeviceCookie(value) {
      res.appendHeader(
        "Set-Cookie",
        serializeCookie(DEVICE_COOKIE, value, {
          httpOnly: true,
          sameSite: "strict",
          secure: options.alwaysSecureCookies || requestIsHttps(req, options),
          // Only login reads it.
          path: "/api/trpc/auth.login",
          maxAge: DEVICE_COOKIE_DAYS * 24 * 3600,
        }),
      );
    },
    setSessionCookie(token, expiresAt) {
      res.appendHeader(
        "Set-Cookie",
        serializeCookie(SESSION_COOKIE, token ?? "", {
          httpOnly: true,
          sameSite: "lax",
          secure: options.alwaysSecureCookies || requestIsHttps(req, options),
          path: "/",
          expires: token ? expiresAt : new Date(0),
        }),
      );
    },
  });
  const headersFor = (errors: readonly { cause?: unknown }[]): Record<string, string> => {
    const seconds = retryAfterSeconds(errors);
    return seconds === undefined ? {} : { "retry-after": String(seconds) };
  };
  const onError = ({ error, path }: { error: TRPCError; path?: string }) => {
    if (error.code === "INTERNAL_SERVER_ERROR") log.error(`tRPC ${path ?? "?"} failed`, error.cause ?? error);
  };
  return createSingleCallHandler({
    router: appRouter,
    maxBodyBytes: MAX_BODY_BYTES,
    createContext,
    headersFor,
    onError,
    adapter: (req, res, path) =>
      nodeHTTPRequestHandler({
        router: appRouter,
        req,
        res,
        path,
        maxBodySize: MAX_BODY_BYTES,
        createContext: () => createContext(req, res),
        responseMeta: ({ errors }) => ({ headers: headersFor(errors) }),
        onError,
      }),
  });
}

/** A refusal in the shape tRPC clients read errors in. */
function refuseRequest(res: ServerResponse, refusal: Refusal): void {
  // The body is not read: the client may stop sending it, and the connection is not reused.
  res.setHeader("connection", "close");
  res
    .writeHead(refusal.status, { "content-type": "application/json" })
    .end(JSON.stringify({ error: { message: refusal.message, code: -32600, data: { code: refusal.code, httpStatus: refusal.status } } }));
}

/**
 * The public keys of decision receipts, for tools to verify them with;
 * cacheable, as keys change rarely. `?workspace=<id>` answers that
 * workspace's receipt keys only.
 */
function serveJwks(receipts: ReceiptSigner, req: IncomingMessage, res: ServerResponse, query: URLSearchParams): void {
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405, { allow: "GET, HEAD", "content-type": "application/json" }).end(JSON.stringify({ error: `${JWKS_PATH} only answers GET` }));
    return;
  }
  const workspace = query.get("workspace") ?? undefined;
  if (workspace !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(workspace)) {
    res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: "workspace must be a workspace id (letters, digits, _ and -)" }));
    return;
  }
  receipts.jwks(workspace).then(
    (jwks) => {
      res.writeHead(200, { "content-type": "application/jwk-set+json", "cache-control": "public, max-age=300" }).end(req.method === "HEAD" ? undefined : JSON.stringify(jwks));
    },
    (error: unknown) => {
      log.error("could not read the receipt signing keys", error);
      if (!res.headersSent) res.writeHead(503, { "content-type": "application/json" }).end(JSON.stringify({ error: "the signing keys cannot be read right now; try again" }));
    },
  );
}

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const { env } = options;
  const secret = await resolveServerSecret({ configured: env.TOLLGATE_SECRET, dataDir: env.TOLLGATE_DATA_DIR });
  const database = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir: env.TOLLGATE_DATA_DIR, embeddedCacheMb: env.TOLLGATE_EMBEDDED_CACHE_MB, embeddedThread: env.TOLLGATE_EMBEDDED_THREAD });
  const bus = new EventBus();
  const shutdown = new AbortController();
  // Every waiting long-poll listens for shutdown; there is no fixed ceiling.
  setMaxListeners(0, shutdown.signal);
  // Replaced by the port actually listened on (PORT=0 picks one).
  let baseUrl = `http://localhost:${env.PORT}`;
  const receipts = new ReceiptSigner({
    prisma: database.prisma,
    secret,
    issuer: () => env.TOLLGATE_PUBLIC_URL ?? baseUrl,
    ttlSeconds: env.TOLLGATE_RECEIPT_TTL_SECONDS,
    // The embedded database runs on this process's event loop.
    signOffTheEventLoop: database.target === "embedded",
  });
  await receipts.start();
  // Failed logins are counted in Redis when there is one, so every node sees them.
  // While Redis is away a command fails at once rather than waiting in a queue,
  // and each node throttles in its own memory meanwhile (the insurance limiter).
  const throttleRedis = env.REDIS_URL ? createClient({ url: env.REDIS_URL, disableOfflineQueue: true }) : undefined;
  if (throttleRedis) {
    throttleRedis.on("error", (error) => log.warn("redis (login throttle)", error));
    await throttleRedis.connect();
  }
  const deps = createServiceDeps(database, bus, {
    sessionTtlHours: env.TOLLGATE_SESSION_TTL_HOURS,
    shutdown: shutdown.signal,
    receipts,
    outbound: createOutbound({ allow: env.TOLLGATE_OUTBOUND_ALLOW, resolver: options.resolver }),
    secret,
    auditDigests: { file: auditDigestFile(env), url: env.TOLLGATE_AUDIT_DIGEST_URL, sealEveryMs: env.TOLLGATE_AUDIT_SEAL_SECONDS * 1000 },
    ...(env.TOLLGATE_SMTP_URL ? { mailer: createMailer(env.TOLLGATE_SMTP_URL, env.TOLLGATE_SMTP_FROM) } : {}),
    publicUrl: () => env.TOLLGATE_PUBLIC_URL ?? baseUrl,
    agentLivenessMs: env.TOLLGATE_AGENT_LIVENESS_SECONDS * 1000,
    cachesOff: env.TOLLGATE_CACHES_OFF,
  });
  // Nodes hear each other through Redis when there is one, else through the PostgreSQL they share.
  // The embedded database serves one process, so it needs no bridge.
  const transport = env.REDIS_URL ? await redisTransport(env.REDIS_URL, env.TOLLGATE_REDIS_CHANNEL) : env.DATABASE_URL ? await postgresTransport(env.DATABASE_URL) : undefined;
  const bridge: Bridge | undefined = transport ? await bridgeBus(bus, transport) : undefined;
  const bootstrap = await bootstrapWorkspace(deps, {
    workspaceName: env.TOLLGATE_WORKSPACE_NAME,
    adminEmail: env.TOLLGATE_ADMIN_EMAIL,
    adminPassword: env.TOLLGATE_ADMIN_PASSWORD,
    agentKey: env.TOLLGATE_AGENT_KEY,
  });
  if (database.appliedMigrations.includes(UNKEYED_ANCHOR_MIGRATION)) await anchorUnkeyedChains(deps);
  const resealed = await sealStoredWebhookSecrets(deps);
  if (resealed) log.info(`sealed the webhook secrets of ${resealed} agent keys stored before they were sealed`);
  const rewritten = await rewriteStoredGlobs(deps);
  if (rewritten) log.info(`rewrote the agent and tool globs of ${rewritten} policy rules into the form names are compared in (case- and width-insensitive); the console shows each rule as it was written`);
  // Keyed by the workspace: the nodes of one deployment share counters, other
  // deployments (or test servers) on the same Redis do not.
  deps.loginThrottle = createLoginThrottle({
    redis: throttleRedis,
    keyPrefix: `tollgate:${bootstrap.workspaceId}:login`,
    deviceKey: deriveKey(secret, "login device cookies v1"),
    now: () => deps.now(),
  });

  let nextHandler: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | undefined;
  let nextUpgrade: ((req: IncomingMessage, socket: import("node:stream").Duplex, head: Buffer) => Promise<void>) | undefined;
  let closeNext: (() => Promise<void>) | undefined;
  if (options.withConsole !== false) {
    const restoreNatives = keepNativeGlobals();
    const { default: next } = await import("next");
    const nextApp = next({ dev: options.dev ?? false, dir: process.cwd(), hostname: "localhost", port: env.PORT });
    await nextApp.prepare();
    restoreNatives();
    const handle = nextApp.getRequestHandler();
    // A page's first request can load Next's runtime, which wraps them again.
    nextHandler = (req, res) => handle(req, res).finally(restoreNatives);
    if (options.dev) nextUpgrade = nextApp.getUpgradeHandler();
    closeNext = () => nextApp.close();
  }

  const metrics = startMetrics(deps, bus);
  const metricsRule = metricsAccess(env);
  if (metricsRule.kind === "open" && metricsRule.warning) log.warn(metricsRule.warning);
  deps.metrics = metrics;
  database.onStatement(metrics.observeStatement);
  // Procedure names label the call metrics; anything else is "unknown", so a caller cannot grow the label set.
  const procedures = new Set(Object.keys(appRouter._def.procedures));
  const procedureLabel = (path: string) => (path.includes(",") ? "batch" : procedures.has(path) ? path : "unknown");
  const migrations = await readMigrations();
  const latestMigration = migrations.migrationDirectories.at(-1)?.path ?? null;
  let draining = false;

  const handleTrpc = createTrpcHandler(deps, { alwaysSecureCookies: env.TOLLGATE_SECURE_COOKIES, trustProxy: env.TOLLGATE_TRUST_PROXY });
  const mutationChecks: MutationCheckOptions = {
    trustProxy: env.TOLLGATE_TRUST_PROXY,
    sessionCookie: SESSION_COOKIE,
    publicOrigin: env.TOLLGATE_PUBLIC_URL ? new URL(env.TOLLGATE_PUBLIC_URL).origin : undefined,
  };
  const server = createServer((req, res) => {
    const url = req.url ?? "/";
    for (const name in API_SECURITY_HEADERS) res.setHeader(name, API_SECURITY_HEADERS[name]!);
    if (url === TRPC_PREFIX || url.startsWith(`${TRPC_PREFIX}/`) || url.startsWith(`${TRPC_PREFIX}?`)) {
      let path: string;
      try {
        path = decodeURIComponent(url.slice(TRPC_PREFIX.length + 1).split("?")[0] ?? "");
      } catch {
        res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "the procedure path is not valid URL encoding" } }));
        return;
      }
      const query = new URLSearchParams(url.split("?")[1] ?? "");
      const batch = query.get("batch") === "1";
      const refusal = refuseTrpcRequest(req, path.split(","), batch, mutationChecks);
      if (refusal) {
        refuseRequest(res, refusal);
        return;
      }
      const started = process.hrtime.bigint();
      res.once("finish", () => metrics.observeCall(procedureLabel(path), res.statusCode, Number(process.hrtime.bigint() - started) / 1e9));
      handleTrpc(req, res, path, query).catch((error: unknown) => {
        log.error("tRPC request failed outside a procedure", error);
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "internal error" } }));
      });
      return;
    }
    if (url === JWKS_PATH || url.startsWith(`${JWKS_PATH}?`)) {
      serveJwks(receipts, req, res, new URLSearchParams(url.split("?")[1] ?? ""));
      return;
    }
    if (url === "/healthz") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, database: database.target }));
      return;
    }
    if (url === "/readyz") {
      void checkReadiness({ prisma: database.prisma, latestMigration, pingRedis: throttleRedis ? () => throttleRedis.ping() : undefined, draining: () => draining }).then((readiness) =>
        res.writeHead(readiness.ready ? 200 : 503, { "content-type": "application/json", "cache-control": "no-store" }).end(JSON.stringify(readiness)),
      );
      return;
    }
    if (url === "/metrics") {
      if (metricsRule.kind === "refused") {
        res.writeHead(403, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "/metrics is closed: set TOLLGATE_METRICS_TOKEN to serve it to the bearer of that token" } }));
        return;
      }
      if (metricsRule.kind === "token" && !sameSecret(bearerToken(req), metricsRule.token)) {
        res.writeHead(401, { "content-type": "application/json", "www-authenticate": "Bearer" }).end(JSON.stringify({ error: { message: "send Authorization: Bearer <TOLLGATE_METRICS_TOKEN>" } }));
        return;
      }
      metrics.registry.metrics().then(
        (text) => res.writeHead(200, { "content-type": metrics.registry.contentType, "cache-control": "no-store" }).end(text),
        (error: unknown) => {
          log.error("metrics collection failed", error);
          res.writeHead(503, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "metrics could not be collected" } }));
        },
      );
      return;
    }
    if (nextHandler) {
      const pageHeaders = consoleSecurityHeaders(newNonce(), options.dev);
      for (const name in pageHeaders) res.setHeader(name, pageHeaders[name]!);
      // Next reads the nonce from the request's policy and puts it on its scripts.
      req.headers["content-security-policy"] = pageHeaders["content-security-policy"];
      nextHandler(req, res).catch((error) => {
        log.error("console request failed", error);
        if (!res.headersSent) res.writeHead(500).end("internal error");
      });
      return;
    }
    res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "not found" }));
  });

  // An idle connection stays open longer than its clients keep it: a request
  // sent on a connection the server is closing at that moment fails with
  // ECONNRESET. Load balancers keep theirs up to 60 s, and Node's http.Agent
  // with keepAlive and no timeout of its own (Playwright's request contexts)
  // ignores the server's Keep-Alive hint and keeps them for ever: at Node's
  // default of 5 s, a browser test whose steps between two API calls took
  // about that long under load met the reset.
  server.keepAliveTimeout = IDLE_CONNECTION_TIMEOUT_MS;
  server.headersTimeout = IDLE_CONNECTION_TIMEOUT_MS + 1_000;

  if (nextUpgrade) {
    server.on("upgrade", (req, socket, head) => {
      if (!req.url?.startsWith("/socket.io")) void nextUpgrade!(req, socket, head);
    });
  }

  const realtime: Realtime = await attachRealtime(server, deps, {
    allowedOrigins: env.TOLLGATE_ALLOWED_ORIGINS,
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(env.PORT, env.HOST, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  baseUrl = `http://localhost:${port}`;

  const expiry = new DueScheduler("expiring approvals", deps, {
    runDue: () => expireDueApprovals(deps),
    nextDue: () => nextExpiry(deps),
    listen: (arm) => deps.bus.on("approval:requested", ({ expiresAt }) => expiresAt && arm(Date.parse(expiresAt))),
  });
  const webhooks = new WebhookDeliverer(deps);
  const notifications = new NotificationDeliverer(deps);
  const escalations = new DueScheduler("escalating approvals", deps, {
    runDue: () => escalateDueApprovals(deps),
    nextDue: () => nextEscalation(deps),
    listen: (arm) => deps.bus.on("approval:requested", ({ escalateAt }) => escalateAt && arm(Date.parse(escalateAt))),
  });
  const sealer = new AuditSealer(deps, deps.auditDigests, env.TOLLGATE_AUDIT_SEAL_SECONDS * 1000);
  // Every few seconds, analyzes the tables that changed enough since their last
  // ANALYZE: on the embedded database, which has no autovacuum, and on a
  // PostgreSQL server whose autovacuum is off or behind.
  const statistics = new WorkLoop("analyzing changed tables", async () => {
    await analyzeChangedTables(database.prisma);
    return STATISTICS_EVERY_MS;
  });
  expiry.start();
  webhooks.start();
  notifications.start();
  escalations.start();
  sealer.start();
  statistics.wake();

  let closing: Promise<void> | undefined;
  return {
    url: baseUrl,
    port,
    database,
    deps,
    bootstrap,
    drain() {
      draining = true;
    },
    close() {
      closing ??= (async () => {
        draining = true;
        shutdown.abort();
        // A connection whose last request ends after this goes idle for the
        // keep-alive timeout, which close() would wait out: such connections
        // are closed as they go idle.
        const idleSweep = setInterval(() => server.closeIdleConnections(), 100);
        const drained = new Promise<void>((resolve) => server.close(() => resolve())).finally(() => clearInterval(idleSweep));
        server.closeIdleConnections();
        await Promise.all([expiry.stop(), webhooks.stop(), notifications.stop(), escalations.stop(), statistics.stop()]);
        deps.mailer?.close();
        // The last word before the database closes: the head as shutdown left it.
        await sealer.stop();
        receipts.close();
        await realtime.close();
        await bridge?.close();
        await throttleRedis?.quit().catch(() => undefined);
        await drained;
        await closeNext?.();
        metrics.stop();
        await database.close();
      })();
      return closing;
    },
  };
}
