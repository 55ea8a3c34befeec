// A Tollgate server in its own process for the benchmark, on a fresh database:
// the bundle production runs (dist/server.mjs, built here once per benchmark),
// without the console.
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { mkdtemp, rm } from "node:fs/promises";
import { freePort } from "../test/databases.ts";
import { copyEmbeddedTemplate } from "../test/templates.ts";
import { tmpdir } from "node:os";
import path from "node:path";

export interface BenchServer {
  url: string;
  agentKey: string;
  admin: { email: string; password: string };
  /** The server's process id, for reading its CPU time (bench/process-cpu.ts). */
  pid: number;
  /** The PostgreSQL database's name, for finding its backends' CPU time; none on the embedded database. */
  databaseName?: string;
  stop(): Promise<void>;
}

async function resetPostgres(databaseUrl: string) {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query("DROP SCHEMA public CASCADE; CREATE SCHEMA public;");
  await client.end();
}

export interface BenchServerOptions {
  /** Empty the database first (false for the second node of a cluster). */
  reset?: boolean;
  /** More environment: REDIS_URL and the TOLLGATE_SECRET every node of a cluster shares. */
  env?: Record<string, string>;
  /** Run the server already built in this directory (its dist/server.mjs) instead of building this checkout's. */
  build?: string;
  /** Run this bundle instead of dist/server.mjs (a copy of an earlier build kept in dist/, to compare with). */
  bundle?: string;
}

/** Extra Node options for the server, e.g. BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/profile" to profile it. */
const nodeArgs = () => (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter(Boolean);

/** Servers still running when the benchmark exits (a bound reached, an error) are killed with it. */
const running = new Set<ReturnType<typeof spawn>>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

const START_SECONDS = Number(process.env.BENCH_SERVER_START_SECONDS ?? 180);

let bundled: Promise<unknown> | undefined;

/** Builds dist/server.mjs the way `npm run build` does (the console is not needed here). */
function serverBundle(): Promise<unknown> {
  bundled ??= promisify(execFile)(process.execPath, ["scripts/build-server.mjs"]);
  return bundled;
}

export async function startBenchServer(databaseUrl?: string, options: BenchServerOptions = {}): Promise<BenchServer> {
  if (!options.build) await serverBundle();
  if (databaseUrl && options.reset !== false) await resetPostgres(databaseUrl);
  const port = await freePort();
  const dataDir = await mkdtemp(path.join(tmpdir(), "tollgate-bench-"));
  // The embedded database already migrated, as a server finds it after its first start: initdb and the migrations take minutes on a loaded machine.
  if (!databaseUrl) await copyEmbeddedTemplate(dataDir);
  const admin = { email: "bench@example.com", password: "bench password" };
  const agentKey = "tgk_bench_agent_key_0000000000";
  const child = spawn(process.execPath, [...nodeArgs(), options.bundle ?? path.join(options.build ?? ".", "dist/server.mjs")], {
    cwd: options.build,
    env: {
      ...process.env,
      NODE_ENV: "production",
      PORT: String(port),
      HOST: "127.0.0.1",
      TOLLGATE_DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl ?? "",
      REDIS_URL: "",
      TOLLGATE_CONSOLE: "off",
      TOLLGATE_ADMIN_EMAIL: admin.email,
      TOLLGATE_ADMIN_PASSWORD: admin.password,
      TOLLGATE_AGENT_KEY: agentKey,
      TOLLGATE_LOG_LEVEL: "warn",
      ...options.env,
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  running.add(child);
  child.once("exit", () => running.delete(child));
  const url = `http://127.0.0.1:${port}`;
  // A loaded machine (other work beside the benchmark) can take minutes to start a server with the console.
  const deadline = Date.now() + START_SECONDS * 1000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`bench server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // starting
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      await rm(dataDir, { recursive: true, force: true });
      throw new Error(`bench server did not start in ${START_SECONDS} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    agentKey,
    admin,
    pid: child.pid!,
    ...(databaseUrl ? { databaseName: decodeURIComponent(new URL(databaseUrl).pathname.slice(1)) } : {}),
    async stop() {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
