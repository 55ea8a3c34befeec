// The server's configuration, parsed once at start. Nothing else reads process.env.
import path from "node:path";
import { z } from "zod";
import { parseAllowlist } from "./domain/outbound.ts";
import { HOT_PATH_CACHES, type HotPathCache } from "./services/cache-names.ts";

const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === "" ? undefined : value));

const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default("0.0.0.0"),
  TOLLGATE_DATA_DIR: z.string().min(1).default("./.data"),
  // The embedded database's page cache (PostgreSQL's shared_buffers inside
  // PGlite), in MB. It lives in the server's own memory, all of it resident
  // from the start, so it is kept small; pages beyond it are read from files
  // the operating system caches. PGlite's memory ends at 2 GB, hence the cap.
  // Not used with DATABASE_URL.
  TOLLGATE_EMBEDDED_CACHE_MB: z.coerce.number().int().min(1).max(1024, "must be at most 1024 (PGlite's memory ends at 2 GB)").default(16),
  // Where the embedded database runs: "main", on the server's one thread, or
  // "worker", on a thread of its own, beside the HTTP and socket work
  // (server/db/database-thread/). Not used with DATABASE_URL.
  TOLLGATE_EMBEDDED_THREAD: z.enum(["main", "worker"]).default("main"),
  DATABASE_URL: optionalString.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
      .optional(),
  ),
  REDIS_URL: optionalString.pipe(
    z
      .string()
      .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
      .optional(),
  ),
  // The pub/sub channel the nodes of one deployment share on Redis; two
  // deployments on one Redis (two checkouts' demos) each take their own.
  TOLLGATE_REDIS_CHANNEL: z.string().min(1).default("tollgate:events"),
  TOLLGATE_ADMIN_EMAIL: optionalString.pipe(z.email().optional()),
  TOLLGATE_ADMIN_PASSWORD: optionalString.pipe(
    z.string().min(8, "must be at least 8 characters").optional(),
  ),
  TOLLGATE_AGENT_KEY: optionalString.pipe(
    z.string().min(16, "must be at least 16 characters").optional(),
  ),
  TOLLGATE_WORKSPACE_NAME: z.string().min(1).default("Default workspace"),
  // Origins allowed to open the socket.io connection, besides the server's own.
  TOLLGATE_ALLOWED_ORIGINS: z
    .string()
    .default("")
    .transform((value) =>
      value
        .split(",")
        .map((origin) => origin.trim())
        .filter(Boolean),
    ),
  // Always mark the session cookie Secure. Without it the cookie is Secure when
  // the login came over HTTPS (directly, or through a trusted proxy).
  TOLLGATE_SECURE_COOKIES: z
    .enum(["true", "false"], { message: 'must be "true" or "false"' })
    .default("false")
    .transform((value) => value === "true"),
  // Behind a reverse proxy: take the client's address from the last
  // X-Forwarded-For hop and the scheme from X-Forwarded-Proto. Off, those
  // headers are ignored, as any client can send them.
  TOLLGATE_TRUST_PROXY: z
    .enum(["true", "false"], { message: 'must be "true" or "false"' })
    .default("false")
    .transform((value) => value === "true"),
  TOLLGATE_SESSION_TTL_HOURS: z.coerce.number().positive().default(12),
  // On SIGTERM, how long /readyz says "not ready" while the node still serves,
  // so a load balancer stops sending it traffic before it closes.
  TOLLGATE_DRAIN_SECONDS: z.coerce.number().min(0).max(120).default(0),
  // For measuring what each of the hot path's caches saves (npm run bench:caches):
  // a comma-separated list of caches to turn off (server/services/caches-off.ts).
  // Answers stay the same; only their cost changes.
  TOLLGATE_CACHES_OFF: z
    .string()
    .default("")
    .transform((value, context) => {
      const names = value.split(",").map((name) => name.trim()).filter(Boolean);
      const unknown = names.filter((name) => !(HOT_PATH_CACHES as readonly string[]).includes(name));
      if (unknown.length) context.addIssue({ code: "custom", message: `names no cache: ${unknown.join(", ")} (the caches: ${HOT_PATH_CACHES.join(", ")})` });
      return new Set(names as HotPathCache[]);
    }),
  // "off" serves only the API and socket.io (no Next.js console), for API-only nodes.
  TOLLGATE_CONSOLE: z.enum(["on", "off"], { message: 'must be "on" or "off"' }).default("on"),
  // Whether the server returns the C allocator's free memory to the system
  // when it goes quiet after a load (glibc only; see idle-memory-trim.ts).
  TOLLGATE_TRIM_IDLE_MEMORY: z.enum(["on", "off"], { message: 'must be "on" or "off"' }).default("on"),
  TOLLGATE_LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
  // "json": one JSON object per line, for log collectors; "text": readable lines for a terminal.
  TOLLGATE_LOG_FORMAT: z.enum(["json", "text"], { message: 'must be "json" or "text"' }).default("json"),
  // When set, /metrics answers only requests carrying "Authorization: Bearer <this>".
  TOLLGATE_METRICS_TOKEN: optionalString.pipe(z.string().min(16, "must be at least 16 characters").optional()),
  // Without TOLLGATE_METRICS_TOKEN: "open" serves /metrics to anyone (in
  // production the server warns at start), "refuse" answers 403 instead.
  TOLLGATE_METRICS_WITHOUT_TOKEN: z.enum(["open", "refuse"], { message: 'must be "open" or "refuse"' }).default("open"),
  // The server's secret: signing keys are stored encrypted under a key derived
  // from it. Unset: generated once into TOLLGATE_DATA_DIR/secret.key.
  TOLLGATE_SECRET: optionalString.pipe(z.string().min(32, "must be at least 32 characters").optional()),
  // Email out: the SMTP server approvals are announced through
  // (smtp://user:pass@host:587, smtps://… for TLS from the start). With it set
  // and no notification channel configured, the operators asked are emailed.
  TOLLGATE_SMTP_URL: optionalString.pipe(
    z
      .string()
      .regex(/^smtps?:\/\//, "must be an smtp:// or smtps:// URL")
      .optional(),
  ),
  TOLLGATE_SMTP_FROM: z.string().min(3).default("Tollgate <tollgate@localhost>"),
  // The base URL tools reach this server at: the `iss` of decision receipts.
  // Unset: http://localhost:<the port listened on>.
  TOLLGATE_PUBLIC_URL: optionalString.pipe(
    z
      .url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" })
      .transform((url) => url.replace(/\/+$/, ""))
      .optional(),
  ),
  // Destinations outbound requests may reach although they are loopback or
  // private: comma-separated host names, host:port, addresses or CIDR ranges.
  TOLLGATE_OUTBOUND_ALLOW: z
    .string()
    .optional()
    .transform((text, context) => {
      try {
        return parseAllowlist(text);
      } catch (error) {
        context.addIssue({ code: "custom", message: (error as Error).message });
        return z.NEVER;
      }
    }),
  // Sealed audit digests, kept outside the database: a file of JSON lines
  // (appended; by default audit-digests.jsonl in TOLLGATE_DATA_DIR, "off" for
  // none) and/or a URL they are POSTed to; sealed at start, every
  // TOLLGATE_AUDIT_SEAL_SECONDS when the log moved, and at shutdown.
  TOLLGATE_AUDIT_DIGEST_FILE: optionalString,
  TOLLGATE_AUDIT_DIGEST_URL: optionalString.pipe(z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }).optional()),
  TOLLGATE_AUDIT_SEAL_SECONDS: z.coerce.number().int().min(1).max(24 * 3600, "must be at most a day (86400)").default(300),
  // An approval no agent has asked about for this long (and with no webhook)
  // is shown as having no one waiting. Above the longest long-poll (60 s).
  TOLLGATE_AGENT_LIVENESS_SECONDS: z.coerce.number().int().min(1).max(3600).default(90),
  // How long a decision receipt stays valid after the decision.
  TOLLGATE_RECEIPT_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(30 * 24 * 3600, "must be at most 30 days (2592000)")
    .default(3600),
});

export type Env = z.infer<typeof envSchema>;

export class EnvError extends Error {}

/** Parses an environment; the error names the first bad variable and what is wrong. */
export function parseEnv(source: Record<string, string | undefined>): Env {
  const result = envSchema.safeParse(source);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const name = issue.path.join(".");
  const value = source[name];
  const shown = /PASSWORD|KEY|SECRET/.test(name) ? "(hidden)" : JSON.stringify(value);
  throw new EnvError(`invalid environment variable ${name}=${shown}: ${issue.message}`);
}

/** The file audit digests are sealed to: TOLLGATE_AUDIT_DIGEST_FILE, else one in the data folder (none for "off" or an in-memory folder). */
export function auditDigestFile(env: Pick<Env, "TOLLGATE_AUDIT_DIGEST_FILE" | "TOLLGATE_DATA_DIR">): string | undefined {
  if (env.TOLLGATE_AUDIT_DIGEST_FILE === "off") return undefined;
  if (env.TOLLGATE_AUDIT_DIGEST_FILE) return env.TOLLGATE_AUDIT_DIGEST_FILE;
  if (env.TOLLGATE_DATA_DIR.startsWith("memory://")) return undefined;
  return path.join(env.TOLLGATE_DATA_DIR, "audit-digests.jsonl");
}

let cached: Env | undefined;

/** The process's configuration, parsed on first use. */
export function env(): Env {
  cached ??= parseEnv(process.env);
  return cached;
}
