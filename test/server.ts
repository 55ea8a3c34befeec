// Starts real Tollgate servers for tests that go over HTTP: on a temporary
// embedded database, or on a new PostgreSQL database for the PostgreSQL run.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { parseEnv } from "../server/env.ts";
import { startServer, type RunningServer } from "../server/http.ts";
import { setLogLevel } from "../server/log.ts";
import type { Resolver } from "../server/net/outbound.ts";
import { operatorClient, type OperatorClient } from "./clients.ts";
import { ADMIN, AGENT_KEY, createMigratedPostgresDatabase, TEST_TARGET } from "./harness.ts";
import { copyEmbeddedTemplate } from "./templates.ts";

export interface TestServer {
  server: RunningServer;
  url: string;
  /** Restart on the same database (as after a crash or deploy). */
  restart(): Promise<TestServer>;
  close(): Promise<void>;
}

export async function startTestServer(extraEnv: Record<string, string> = {}, options: { resolver?: Resolver } = {}): Promise<TestServer> {
  setLogLevel("warn");
  let databaseUrl: string | undefined;
  let cleanup: () => Promise<void>;
  const dataDir = await mkdtemp(path.join(tmpdir(), "tollgate-test-"));
  if (TEST_TARGET === "postgres") {
    const database = await createMigratedPostgresDatabase();
    databaseUrl = database.url;
    cleanup = async () => {
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    };
  } else {
    await copyEmbeddedTemplate(dataDir);
    cleanup = () => rm(dataDir, { recursive: true, force: true });
  }
  const env = parseEnv({
    PORT: "0",
    HOST: "127.0.0.1",
    TOLLGATE_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    TOLLGATE_ADMIN_EMAIL: ADMIN.email,
    TOLLGATE_ADMIN_PASSWORD: ADMIN.password,
    TOLLGATE_AGENT_KEY: AGENT_KEY,
    // The tests' webhook receivers listen on loopback.
    TOLLGATE_OUTBOUND_ALLOW: "127.0.0.1",
    ...extraEnv,
  });
  const open = async (): Promise<TestServer> => {
    const server = await startServer({ env, withConsole: false, resolver: options.resolver });
    return {
      server,
      url: server.url,
      async restart() {
        await server.close();
        return open();
      },
      async close() {
        await server.close();
        await cleanup();
      },
    };
  };
  return open();
}

/** Calls a procedure over plain HTTP the way curl or Python would. */
export async function callHttp(
  baseUrl: string,
  procedure: string,
  kind: "query" | "mutation",
  input: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const url =
    kind === "query"
      ? `${baseUrl}/api/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify(input))}`
      : `${baseUrl}/api/trpc/${procedure}`;
  const response = await fetch(url, {
    method: kind === "query" ? "GET" : "POST",
    headers: { "content-type": "application/json", ...headers },
    body: kind === "mutation" ? (typeof input === "string" ? input : JSON.stringify(input)) : undefined,
  });
  return { status: response.status, body: await response.json() };
}

/** One started server for the test file (with `extraEnv` over the tests' settings), and an operator logged in to it. */
export function useTestServer(onReady: (test: TestServer, operator: OperatorClient) => void, extraEnv: Record<string, string> = {}): void {
  let test: TestServer | undefined;
  beforeAll(async () => {
    test = await startTestServer(extraEnv);
    onReady(test, await operatorClient(test.url));
  });
  afterAll(async () => {
    await test?.close();
  });
}
