// npm run demo: builds if needed, starts Tollgate on the embedded database,
// starts the demo agent chain (six services, one process each) and its client,
// and prints where to log in.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { demoPorts, describePorts } from "./demo-ports.mjs";

const ports = await demoPorts();
const port = String(ports.port);
let url = `http://localhost:${port}`;
const env = {
  ...process.env,
  NODE_ENV: "production",
  TOLLGATE_LOG_FORMAT: process.env.TOLLGATE_LOG_FORMAT ?? "text",
  NEXT_TELEMETRY_DISABLED: "1",
  PORT: port,
  TOLLGATE_DATA_DIR: process.env.TOLLGATE_DATA_DIR ?? "./.data/demo",
  TOLLGATE_ADMIN_EMAIL: process.env.TOLLGATE_ADMIN_EMAIL ?? "admin@tollgate.local",
  TOLLGATE_ADMIN_PASSWORD: process.env.TOLLGATE_ADMIN_PASSWORD ?? "tollgate-demo",
  TOLLGATE_AGENT_KEY: process.env.TOLLGATE_AGENT_KEY ?? "tgk_demo_agent_key_for_local_use",
  TOLLGATE_URL: `http://127.0.0.1:${port}`,
  // Approvals are emailed to the demo's own mailbox (demo/mail-sink.ts) unless an SMTP server is given.
  // Local webhook receivers (a test Slack-compatible server, say) are allowed in the demo.
  TOLLGATE_OUTBOUND_ALLOW: process.env.TOLLGATE_OUTBOUND_ALLOW ?? "127.0.0.1,localhost",
  TOLLGATE_SMTP_URL: process.env.TOLLGATE_SMTP_URL ?? `smtp://127.0.0.1:${ports.smtpPort}`,
  TOLLGATE_DEMO_SMTP_PORT: String(ports.smtpPort),
  TOLLGATE_DEMO_AGENT_PORTS: JSON.stringify(ports.agentPorts),
};

if (!existsSync(".next/BUILD_ID") || !existsSync("dist/server.mjs")) {
  console.log("Building Tollgate (first run only)…");
  const build = spawnSync("npm", ["run", "build"], { stdio: "inherit", env });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const children = [];
/** Starts a demo process; its output is printed under its name, each whole line also given to `onLine`. */
function run(name, args, { extraEnv = {}, onLine = () => {}, mayExit = () => false } = {}) {
  const child = spawn(process.execPath, args, { env: { ...env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
  const prefix = `[${name}] `;
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding("utf8");
    let partial = "";
    stream.on("data", (text) => {
      process.stdout.write(text.replace(/^(?=.)/gm, prefix));
      const lines = (partial + text).split("\n");
      partial = lines.pop();
      for (const line of lines) onLine(line);
    });
  }
  child.on("exit", (code) => {
    if (!stopping && !mayExit()) {
      console.error(`${prefix}exited with ${code}; stopping the demo`);
      stop(1);
    }
  });
  children.push(child);
  return child;
}

let stopping = false;
function stop(code = 0) {
  stopping = true;
  process.exitCode = code;
  for (const child of children) child.kill("SIGTERM");
  setTimeout(() => process.exit(code), 1_500).unref();
}
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

if (!process.env.TOLLGATE_SMTP_URL) run("mailbox", ["--import", "tsx", "demo/mail-sink.ts"]);

/**
 * Starts Tollgate on `listenPort` (0: one the system picks) and resolves with
 * the port it says it listens on, read from its own output: a health check on
 * the port could be answered by another checkout's server. Resolves null when
 * it exits first: the port was taken meanwhile (two demos can find 3000 free
 * at once), or the demo is stopping.
 */
function startTollgate(listenPort) {
  return new Promise((resolve) => {
    let taken = false;
    let listening = false;
    const server = run("tollgate", ["dist/server.mjs"], {
      extraEnv: { PORT: String(listenPort) },
      onLine: (line) => {
        if (line.includes("EADDRINUSE") && !taken) {
          taken = true;
          server.kill("SIGTERM");
        }
        const said = /Tollgate listening on https?:\/\/\S+:(\d+)/.exec(line);
        if (said && !listening) {
          listening = true;
          resolve(Number(said[1]));
        }
      },
      mayExit: () => taken && !listening,
    });
    server.on("exit", () => resolve(null));
  });
}

// The first start migrates a new database, which a busy machine makes slow: the
// demo waits for as long as the server is alive (its exit stops the demo), since
// stopping it mid-start would only make the next start do the work again.
const waitingSince = Date.now();
const tellWaiting = setInterval(() => console.log(`Tollgate is still starting (${Math.round((Date.now() - waitingSince) / 1000)} s)…`), 15_000);
let listeningPort = await startTollgate(ports.port);
if (listeningPort === null && !process.env.PORT && !stopping) {
  console.log(`Port ${ports.port} was taken as Tollgate started; it takes one the system picks instead.`);
  listeningPort = await startTollgate(0);
}
clearInterval(tellWaiting);
if (stopping) process.exit();
if (listeningPort === null) {
  console.error(`Port ${ports.port} is taken: stop what listens there, or choose another with PORT.`);
  for (const child of children) child.kill("SIGTERM");
  process.exit(1);
}
url = `http://localhost:${listeningPort}`;
env.PORT = String(listeningPort);
env.TOLLGATE_URL = `http://127.0.0.1:${listeningPort}`;

for (const role of ["A1", "A2", "A3", "A4", "O2", "O1"]) run(role, ["--import", "tsx", "demo/agent.ts", role]);
await new Promise((resolve) => setTimeout(resolve, 1_500));
run("client", ["--import", "tsx", "demo/client.ts"]);
// An MCP client with tollgate-mcp in front of the demo's own MCP server.
run("mcp", ["--import", "tsx", "demo/mcp-client.ts"]);

console.log(`
  Tollgate is running: ${url}
  Log in as ${env.TOLLGATE_ADMIN_EMAIL} / ${env.TOLLGATE_ADMIN_PASSWORD}
  Agent key: ${env.TOLLGATE_AGENT_KEY}
${describePorts(ports, !process.env.TOLLGATE_SMTP_URL)}
  A new customer conversation starts every few seconds; its email needs your approval.
  An MCP client calls the demo's notes server through tollgate-mcp: its calls wait in the inbox as agent "notes".
  Each approval is also emailed to the operators (see the [mailbox] lines: its link opens it in the console).
  Press Ctrl+C to stop.
`);
