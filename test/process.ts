// Runs Tollgate as a separate server process (tsx server/main.ts), for tests
// that kill it the hard way.
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, renameSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ADMIN, AGENT_KEY, createMigratedPostgresDatabase, TEST_TARGET } from "./harness.ts";
import { nodeScript } from "./node-script.ts";
import { copyEmbeddedTemplate } from "./templates.ts";

/** The server as `npm start` runs it, bundled from its sources as `npm run build` bundles it. */
const SERVER_MAIN = path.resolve(import.meta.dirname, "../server/main.ts");
/** The embedded database's thread (TOLLGATE_EMBEDDED_THREAD=worker), which the server starts from beside its own bundle. */
const DATABASE_THREAD = path.resolve(import.meta.dirname, "../server/db/database-thread/worker.ts");

let placed: string | undefined;

/** The server's bundle with the database thread's beside it, as `npm run build` writes dist/ (placed once per test process). */
function serverBundle(): string {
  if (placed) return placed;
  const server = nodeScript(SERVER_MAIN);
  const beside = path.join(path.dirname(server), "database-thread.mjs");
  // Copied aside and renamed: another worker may be placing the same file.
  const copied = `${beside}.${process.pid}`;
  copyFileSync(nodeScript(DATABASE_THREAD), copied);
  renameSync(copied, beside);
  placed = server;
  return server;
}

export interface ServerProcess {
  /** Known once the first start() has returned: the port the server chose, kept for its restarts. */
  readonly url: string;
  start(): Promise<void>;
  kill(signal: NodeJS.Signals): Promise<number | null>;
  cleanup(): Promise<void>;
  output(): string;
}

export interface ServerProcessOptions {
  /** A PostgreSQL database another node uses too (the caller drops it); else one of its own on PostgreSQL runs. */
  databaseUrl?: string;
  /** More environment, e.g. REDIS_URL and a TOLLGATE_SECRET shared by the nodes. */
  env?: Record<string, string>;
  /** The port to listen on; by default the server takes a free one at its first start. */
  port?: number;
}

/** The server's own "listening on" line, which names the port it took. */
const LISTENING = /Tollgate listening on https?:\/\/\S+:(\d+)/;

export async function serverProcess(options: ServerProcessOptions = {}): Promise<ServerProcess> {
  // Port 0 at the first start, so the kernel hands out the port as the server binds it:
  // a port found free beforehand can be taken by another process before the server binds.
  let port = options.port ?? 0;
  const dataDir = await mkdtemp(path.join(tmpdir(), "tollgate-proc-"));
  const postgres = !options.databaseUrl && TEST_TARGET === "postgres" ? await createMigratedPostgresDatabase() : undefined;
  if (!options.databaseUrl && TEST_TARGET !== "postgres") await copyEmbeddedTemplate(dataDir);
  let child: ChildProcess | undefined;
  let log = "";
  async function kill(signal: NodeJS.Signals): Promise<number | null> {
    // Already gone: exited (exitCode) or killed by a signal (signalCode, exitCode stays null).
    if (!child || child.exitCode !== null || child.signalCode !== null) return child?.exitCode ?? null;
    const exited = new Promise<number | null>((resolve) => child!.once("exit", (code) => resolve(code)));
    child.kill(signal);
    return exited;
  }
  return {
    get url() {
      if (port === 0) throw new Error("the server process has not started yet: its port is chosen at its first start");
      return `http://127.0.0.1:${port}`;
    },
    output: () => log,
    async start() {
      child = spawn(process.execPath, [serverBundle()], {
        env: {
          ...process.env,
          PORT: String(port),
          HOST: "127.0.0.1",
          TOLLGATE_DATA_DIR: dataDir,
          DATABASE_URL: options.databaseUrl ?? postgres?.url ?? "",
          REDIS_URL: "",
          TOLLGATE_ADMIN_EMAIL: ADMIN.email,
          TOLLGATE_ADMIN_PASSWORD: ADMIN.password,
          TOLLGATE_AGENT_KEY: AGENT_KEY,
          // The tests' webhook receivers listen on loopback.
          TOLLGATE_OUTBOUND_ALLOW: "127.0.0.1",
          TOLLGATE_CONSOLE: "off",
          // Info: the line that says which port the server took.
          TOLLGATE_LOG_LEVEL: "info",
          ...options.env,
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      child.stdout!.on("data", (chunk) => (log += chunk));
      child.stderr!.on("data", (chunk) => (log += chunk));
      const deadline = Date.now() + 60_000;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}):\n${log}`);
        if (port === 0) port = Number(LISTENING.exec(log)?.[1] ?? 0);
        if (port !== 0) {
          try {
            if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return;
          } catch {
            // not listening yet
          }
        }
        if (Date.now() > deadline) throw new Error(`server did not start within 60 s:\n${log}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    kill,
    async cleanup() {
      await kill("SIGKILL");
      await postgres?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
