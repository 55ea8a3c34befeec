// npm run demo:cluster: two Tollgate nodes on one PostgreSQL database with
// Redis between them, behind a small round-robin load balancer (http-proxy-3,
// WebSockets included), and the demo agent chain calling the balancer. Stop a
// node (its PID is printed) and the balancer sends everything to the other.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { createProxyServer } from "http-proxy-3";
import pg from "pg";
import { demoPorts, describePorts, freePort } from "./demo-ports.mjs";

const ports = await demoPorts();
const port = ports.port;
const url = `http://localhost:${port}`;
const nodePorts = [await freePort(), await freePort()];
const databaseUrl = process.env.DATABASE_URL ?? "postgres://root@127.0.0.1:5432/tollgate_demo_cluster";
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

// The database is created on first run (as `npm run demo` creates its data folder).
async function ensureDatabase() {
  const target = new URL(databaseUrl);
  const name = target.pathname.slice(1);
  const admin = new pg.Client({ connectionString: Object.assign(new URL(databaseUrl), { pathname: "/postgres" }).toString() });
  await admin.connect();
  try {
    const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } finally {
    await admin.end();
  }
}

const env = {
  ...process.env,
  NODE_ENV: "production",
  NEXT_TELEMETRY_DISABLED: "1",
  TOLLGATE_LOG_FORMAT: process.env.TOLLGATE_LOG_FORMAT ?? "text",
  DATABASE_URL: databaseUrl,
  REDIS_URL: redisUrl,
  // Every node must hold the same secret (receipt keys, sealed channel secrets).
  TOLLGATE_SECRET: process.env.TOLLGATE_SECRET ?? randomBytes(32).toString("hex"),
  TOLLGATE_PUBLIC_URL: url,
  TOLLGATE_TRUST_PROXY: "true",
  TOLLGATE_ADMIN_EMAIL: process.env.TOLLGATE_ADMIN_EMAIL ?? "admin@tollgate.local",
  TOLLGATE_ADMIN_PASSWORD: process.env.TOLLGATE_ADMIN_PASSWORD ?? "tollgate-demo",
  TOLLGATE_AGENT_KEY: process.env.TOLLGATE_AGENT_KEY ?? "tgk_demo_agent_key_for_local_use",
  TOLLGATE_URL: `http://127.0.0.1:${port}`,
  TOLLGATE_OUTBOUND_ALLOW: process.env.TOLLGATE_OUTBOUND_ALLOW ?? "127.0.0.1,localhost",
  TOLLGATE_DEMO_AGENT_PORTS: JSON.stringify(ports.agentPorts),
};

if (!existsSync(".next/BUILD_ID") || !existsSync("dist/server.mjs")) {
  console.log("Building Tollgate (first run only)…");
  const build = spawnSync("npm", ["run", "build"], { stdio: "inherit", env });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const children = [];
let stopping = false;
function run(name, args, extraEnv = {}) {
  const child = spawn(process.execPath, args, { env: { ...env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
  const prefix = `[${name}] `;
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding("utf8");
    stream.on("data", (text) => process.stdout.write(text.replace(/^(?=.)/gm, prefix)));
  }
  // A node may be stopped on purpose to watch the other take over; the rest may not.
  child.on("exit", (code) => {
    if (!stopping && !name.startsWith("node")) {
      console.error(`${prefix}exited with ${code}; stopping the demo`);
      stop(1);
    } else if (!stopping) console.log(`${prefix}exited with ${code}; the balancer sends its traffic to the other node`);
  });
  children.push(child);
  return child;
}

function stop(code = 0) {
  stopping = true;
  for (const child of children) child.kill("SIGTERM");
  setTimeout(() => process.exit(code), 2_000).unref();
}
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

async function waitUntilReady(nodeUrl) {
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      if ((await fetch(`${nodeUrl}/readyz`)).ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${nodeUrl} was not ready within 90 s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

await ensureDatabase();
const nodes = [];
// One after the other: the first applies the migrations and creates the first admin.
for (const [index, nodePort] of nodePorts.entries()) {
  const child = run(`node${index + 1}`, ["dist/server.mjs"], { PORT: String(nodePort) });
  const nodeUrl = `http://127.0.0.1:${nodePort}`;
  await waitUntilReady(nodeUrl);
  nodes.push({ url: nodeUrl, pid: child.pid, ready: true });
}

// Readiness decides who gets traffic, checked every second.
setInterval(() => {
  for (const node of nodes) {
    fetch(`${node.url}/readyz`).then(
      (response) => (node.ready = response.ok),
      () => (node.ready = false),
    );
  }
}, 1_000).unref();

let turn = 0;
function pick() {
  const ready = nodes.filter((node) => node.ready);
  if (ready.length === 0) return undefined;
  turn = (turn + 1) % ready.length;
  return ready[turn];
}

const proxy = createProxyServer({ xfwd: true });
proxy.on("error", (error, _req, res) => {
  if (res && "writeHead" in res && !res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end(`no node answered: ${error.message}`);
  else res?.destroy?.();
});
const balancer = createServer((req, res) => {
  const node = pick();
  if (!node) return void res.writeHead(503, { "content-type": "text/plain" }).end("no Tollgate node is ready");
  proxy.web(req, res, { target: node.url });
});
balancer.on("upgrade", (req, socket, head) => {
  const node = pick();
  if (!node) return void socket.destroy();
  proxy.ws(req, socket, head, { target: node.url });
});
await new Promise((resolve) => balancer.listen(port, resolve));

for (const role of ["A1", "A2", "A3", "A4", "O2", "O1"]) run(role, ["--import", "tsx", "demo/agent.ts", role]);
await new Promise((resolve) => setTimeout(resolve, 1_500));
run("client", ["--import", "tsx", "demo/client.ts"]);

console.log(`
  Tollgate cluster: ${url} (a round-robin balancer over two nodes)
    node1: ${nodes[0].url} (pid ${nodes[0].pid})
    node2: ${nodes[1].url} (pid ${nodes[1].pid})
  Database: ${databaseUrl}   Redis: ${redisUrl}
  Log in as ${env.TOLLGATE_ADMIN_EMAIL} / ${env.TOLLGATE_ADMIN_PASSWORD}
  Agent key: ${env.TOLLGATE_AGENT_KEY}
${describePorts(ports, false)}
  Stop one node (kill <pid>) and watch the other carry on. Press Ctrl+C to stop.
`);
