#!/usr/bin/env node
// tollgate-mcp: put Tollgate in front of any MCP server. What an MCP client
// (Claude Desktop, Cursor, VS Code, Claude Code) runs in place of the server's
// own command; every tool call is then decided in Tollgate. stdout carries
// the protocol, so everything the gateway says goes to stderr.
import { parseArgs } from "node:util";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Implementation } from "@modelcontextprotocol/sdk/types.js";
import { createTollgate } from "../index.ts";
import { toolCallGate } from "./gate-tool-call.ts";
import { serveClient, type GatewayConnection } from "./gateway.ts";
import { listen } from "./listen.ts";
import { holderOfDeadGateway, openRun, runStateFile, type Run } from "./run.ts";
import { TaskJournal } from "./task-journal.ts";

const USAGE = `usage: tollgate-mcp --url <Tollgate URL> [--agent <name>] [--run-id <id>] [--session-title <title>]
                    [--no-results] [--progress-interval <ms>] [--state-dir <folder>]
                    [--listen <port> [--host <address>]] (-- <command> [args...] | --upstream <url>)

  --progress-interval: how often a waiting call sends the client progress (ms, default 15000), when
  the client gave a progress token. --state-dir: where a gateway without --run-id notes its run, so
  that one started again in the same folder cancels what it left pending ($XDG_STATE_HOME/tollgate-mcp).

  The agent key comes from TOLLGATE_AGENT_KEY. An upstream over HTTP gets the headers named by
  TOLLGATE_MCP_UPSTREAM_HEADER_<NAME> (e.g. TOLLGATE_MCP_UPSTREAM_HEADER_AUTHORIZATION="Bearer ...").
  --listen serves Streamable HTTP at http://<host>:<port>/mcp (host 127.0.0.1 unless given) to
  clients that send Authorization: Bearer $TOLLGATE_MCP_LISTEN_TOKEN.`;

const log = (line: string) => process.stderr.write(`${line}\n`);

function fail(message: string): never {
  log(`tollgate-mcp: ${message}\n\n${USAGE}`);
  process.exit(2);
}

/** The gateway's own secrets stay with it: an upstream server is not trusted with the agent key. */
function upstreamEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && name !== "TOLLGATE_AGENT_KEY" && !name.startsWith("TOLLGATE_MCP_")) env[name] = value;
  }
  return env;
}

function upstreamHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    const header = /^TOLLGATE_MCP_UPSTREAM_HEADER_(.+)$/.exec(name)?.[1];
    if (header && value !== undefined) headers[header.toLowerCase().replace(/_/g, "-")] = value;
  }
  return headers;
}

async function main() {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        url: { type: "string" },
        agent: { type: "string" },
        "run-id": { type: "string" },
        "session-title": { type: "string" },
        upstream: { type: "string" },
        listen: { type: "string" },
        host: { type: "string" },
        "no-results": { type: "boolean" },
        "progress-interval": { type: "string" },
        "state-dir": { type: "string" },
        help: { type: "boolean" },
      },
    });
  } catch (error) {
    fail((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    log(USAGE);
    return;
  }
  const url = values.url ?? process.env.TOLLGATE_URL;
  if (!url) fail("--url (or TOLLGATE_URL) is required: the Tollgate server's base URL");
  if (!/^https?:\/\//.test(url)) fail(`--url must be an http(s) URL, not "${url}"`);
  const apiKey = process.env.TOLLGATE_AGENT_KEY;
  if (!apiKey) fail("TOLLGATE_AGENT_KEY is not set: the gateway asks Tollgate with an agent key");
  if (values.upstream && positionals.length > 0) fail("give the upstream either as a command after -- or as --upstream <url>, not both");
  if (!values.upstream && positionals.length === 0) fail("no upstream MCP server: give its command after --, or --upstream <url>");
  const progressIntervalMs = values["progress-interval"] === undefined ? 15_000 : Number(values["progress-interval"]);
  if (!Number.isInteger(progressIntervalMs) || progressIntervalMs < 10) fail("--progress-interval is a number of milliseconds (at least 10)");

  const runId = values["run-id"];
  const runFile = runId === undefined ? undefined : runStateFile({ url, apiKey, stateDir: values["state-dir"] }, runId);
  // One name for this process in its claims, its run's lease and its held connection: a new one each start.
  const tollgate = createTollgate({ url, apiKey, networkRetries: 2 });
  const replacing = runFile === undefined ? undefined : await holderOfDeadGateway(runFile);
  let run: Promise<Run> | null = null;
  let gate: ReturnType<typeof toolCallGate> | null = null;
  const connection: GatewayConnection = {
    log,
    // Only a run that can be continued has tasks to take up again.
    taskJournal: runFile === undefined ? undefined : new TaskJournal(runFile.replace(/\.json$/, ".tasks.json")),
    upstream: () => {
      if (values.upstream) return new StreamableHTTPClientTransport(new URL(values.upstream), { requestInit: { headers: upstreamHeaders() } });
      const [command, ...args] = positionals;
      return new StdioClientTransport({ command: command!, args, env: upstreamEnvironment(), stderr: "inherit" });
    },
    // One gateway process is one run: every connection's calls are asked in it.
    gateFor: async (upstream: Implementation) => {
      if (gate) return gate;
      const agent = values.agent ?? upstream.name;
      // Opened now, so what a dead gateway left is canceled at once; again at a call after a
      // failure, as Tollgate may be down when the client starts the gateway.
      const openedRun = () => {
        run ??= openRun({ tollgate, url, apiKey, agent, runId, replacing, sessionTitle: values["session-title"], stateDir: values["state-dir"], log }).catch((error) => {
          run = null;
          throw error;
        });
        return run;
      };
      openedRun().catch((error: Error) => log(`tollgate-mcp: Tollgate at ${url} cannot be asked yet (every tool call fails until it can): ${error.message}`));
      gate = toolCallGate({ tollgate, agent, keepResults: !values["no-results"], progressIntervalMs, log, run: openedRun });
      return gate;
    },
  };

  if (values.listen !== undefined) {
    const token = process.env.TOLLGATE_MCP_LISTEN_TOKEN;
    if (!token || token.length < 16) fail("--listen needs TOLLGATE_MCP_LISTEN_TOKEN, at least 16 characters, which clients send as a bearer token");
    const port = Number(values.listen);
    if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--listen takes a port number, not "${values.listen}"`);
    const served = await listen({ port, host: values.host ?? "127.0.0.1", token, connection });
    log(`tollgate-mcp: serving MCP at ${served.url}`);
    return;
  }

  const stdio = new StdioServerTransport();
  // The SDK's stdio transport does not notice the client closing its end: the gateway does, and ends.
  process.stdin.once("end", () => void stdio.close());
  await serveClient(stdio, connection);
  // The client has gone and its calls are canceled: the run's root request ends with it.
  const opened = await (run as Promise<Run> | null)?.catch(() => null);
  await opened?.end().catch((error: Error) => log(`tollgate-mcp: could not end the run's request: ${error.message}`));
  tollgate.close();
  process.exit(0);
}

main().catch((error) => {
  log(`tollgate-mcp: ${(error as Error).stack ?? String(error)}`);
  process.exit(1);
});
