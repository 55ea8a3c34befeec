// npm run demo:cluster: two Tollgate nodes on one PostgreSQL database with
// Redis between them, behind a small round-robin load balancer (http-proxy-3,
// WebSockets included), and the demo agent chain calling the balancer. Stop a
// node (its PID is printed) and the balancer sends everything to the other.
// Each checkout has a database and a Redis channel of its own, and the
// balancer holds its port from the start, so a second checkout's cluster runs
// beside the first, or stops at once saying what is taken and what moves it.
import { spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { createProxyServer } from "http-proxy-3";
import pg from "pg";
import { createClient } from "redis";
import { demoPorts, describePorts, freePort } from "./demo-ports.mjs";

const checkout = realpathSync(path.resolve(import.meta.dirname, ".."));
const checkoutId = createHash("sha256").update(checkout).digest("hex").slice(0, 8);
const databaseUrl = process.env.DATABASE_URL ?? `postgres://root@127.0.0.1:5432/tollgate_demo_cluster_${checkoutId}`;
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redisChannel = process.env.TOLLGATE_REDIS_CHANNEL ?? `tollgate:demo-cluster:${checkoutId}:events`;

const dataDir = "./.data/demo-cluster";
mkdirSync(dataDir, { recursive: true });

/** The nodes' shared secret, kept beside the checkout's database: a secret of the run's own could not open what an earlier run sealed. */
function clusterSecret() {
  if (process.env.TOLLGATE_SECRET) return process.env.TOLLGATE_SECRET;
  const file = path.join(dataDir, "secret");
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString("hex"), { mode: 0o600, flag: "wx" });
  return readFileSync(file, "utf8").trim();
}

function refuse(message) {
  console.error(`demo:cluster: ${message}`);
  process.exit(1);
}

const withoutPassword = (url) => Object.assign(new URL(url), { password: "" }).toString();

/** Listens on PORT, else on 3000 when free, else on a free port; a PORT that is taken stops the demo at once. */
async function listenFirst(server) {
  const listen = (port) =>
    new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, () => {
        server.off("error", reject);
        resolve(server.address().port);
      });
    });
  const wanted = process.env.PORT;
  try {
    return await listen(wanted ? Number(wanted) : 3000);
  } catch (error) {
    if (error.code !== "EADDRINUSE") throw error;
    if (wanted) refuse(`port ${wanted} (PORT) is taken, perhaps by another checkout's demo; choose another with PORT=<port>, or PORT=0 for a free one`);
    return listen(0);
  }
}

// The database is created on first run (as `npm run demo` creates its data folder).
async function ensureDatabase() {
  const target = new URL(databaseUrl);
  const name = target.pathname.slice(1);
  const admin = new pg.Client({ connectionString: Object.assign(new URL(databaseUrl), { pathname: "/postgres" }).toString() });
  try {
    await admin.connect();
  } catch (error) {
    refuse(`cannot reach PostgreSQL at ${withoutPassword(databaseUrl)} (${error.message}); start it, or name another with DATABASE_URL`);
  }
  try {
    const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    // Another cluster on this database (this checkout's, started twice) would share its data with a different secret.
    const others = await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'", [name]);
    if (others.rows[0].n > 0) {
      refuse(`database ${name} is in use (${others.rows[0].n} connections), perhaps by this checkout's demo:cluster already running; stop it, or name another database with DATABASE_URL`);
    }
  } finally {
    await admin.end();
  }
}

async function ensureRedisChannel() {
  const redis = createClient({ url: redisUrl, socket: { reconnectStrategy: false } });
  redis.on("error", () => {});
  try {
    await redis.connect();
  } catch (error) {
    refuse(`cannot reach Redis at ${withoutPassword(redisUrl)} (${error.message}); start it, or name another with REDIS_URL`);
  }
  try {
    const listening = (await redis.pubSubNumSub(redisChannel))[redisChannel] ?? 0;
    if (listening > 0) refuse(`Redis channel ${redisChannel} has ${listening} listeners already, perhaps this checkout's demo:cluster; stop it, or choose another with TOLLGATE_REDIS_CHANNEL`);
  } finally {
    await redis.quit();
  }
}

// The balancer sends to the nodes that are ready (none until they started).
const nodes = [];
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
const port = await listenFirst(balancer);
const url = `http://localhost:${port}`;
await ensureDatabase();
await ensureRedisChannel();

const env = {
  ...process.env,
  NODE_ENV: "production",
  NEXT_TELEMETRY_DISABLED: "1",
  TOLLGATE_LOG_FORMAT: process.env.TOLLGATE_LOG_FORMAT ?? "text",
  DATABASE_URL: databaseUrl,
  REDIS_URL: redisUrl,
  TOLLGATE_REDIS_CHANNEL: redisChannel,
  // Every node must hold the same secret (receipt keys, sealed channel secrets).
  TOLLGATE_SECRET: clusterSecret(),
  TOLLGATE_PUBLIC_URL: url,
  TOLLGATE_TRUST_PROXY: "true",
  TOLLGATE_ADMIN_EMAIL: process.env.TOLLGATE_ADMIN_EMAIL ?? "admin@tollgate.local",
  TOLLGATE_ADMIN_PASSWORD: process.env.TOLLGATE_ADMIN_PASSWORD ?? "tollgate-demo",
  TOLLGATE_AGENT_KEY: process.env.TOLLGATE_AGENT_KEY ?? "tgk_demo_agent_key_for_local_use",
  TOLLGATE_URL: `http://127.0.0.1:${port}`,
  TOLLGATE_OUTBOUND_ALLOW: process.env.TOLLGATE_OUTBOUND_ALLOW ?? "127.0.0.1,localhost",
};

if (!existsSync(".next/BUILD_ID") || !existsSync("dist/server.mjs")) {
  console.log("Building Tollgate (first run only)…");
  const build = spawnSync("npm", ["run", "build"], { stdio: "inherit", env });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
// Chosen after the build, so that they are still free when the processes start.
const ports = await demoPorts({ ...process.env, PORT: String(port) });
env.TOLLGATE_DEMO_AGENT_PORTS = JSON.stringify(ports.agentPorts);

const children = [];
let stopping = false;
function run(name, args, extraEnv = {}) {
  const child = spawn(process.execPath, args, { env: { ...env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
  const prefix = `[${name}] `;
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding("utf8");
    stream.on("data", (text) => process.stdout.write(text.replace(/^(?=.)/gm, prefix)));
  }
  // A node may be stopped on purpose to watch the other take over, once it served; the rest may not.
  child.on("exit", (code) => {
    if (!stopping && !(name.startsWith("node") && nodes.some((node) => node.pid === child.pid))) {
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

// One after the other: the first applies the migrations and creates the first admin.
for (const index of [0, 1]) {
  const nodePort = await freePort();
  // Its own folder: each node seals audit digests to a file of its own there.
  const nodeDataDir = path.join(dataDir, `node${index + 1}`);
  mkdirSync(nodeDataDir, { recursive: true });
  const child = run(`node${index + 1}`, ["dist/server.mjs"], { PORT: String(nodePort), TOLLGATE_DATA_DIR: nodeDataDir });
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

for (const role of ["A1", "A2", "A3", "A4", "O2", "O1"]) run(role, ["--import", "tsx", "demo/agent.ts", role]);
await new Promise((resolve) => setTimeout(resolve, 1_500));
run("client", ["--import", "tsx", "demo/client.ts"]);

console.log(`
  Tollgate cluster: ${url} (a round-robin balancer over two nodes)
    node1: ${nodes[0].url} (pid ${nodes[0].pid})
    node2: ${nodes[1].url} (pid ${nodes[1].pid})
  Database: ${withoutPassword(databaseUrl)}   Redis: ${withoutPassword(redisUrl)} (channel ${redisChannel})
  Log in as ${env.TOLLGATE_ADMIN_EMAIL} / ${env.TOLLGATE_ADMIN_PASSWORD}
  Agent key: ${env.TOLLGATE_AGENT_KEY}
${describePorts(ports, false)}
  Stop one node (kill <pid>) and watch the other carry on. Press Ctrl+C to stop.
`);
