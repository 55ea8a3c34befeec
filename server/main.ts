// The server process: parse the configuration, start, and shut down cleanly on SIGTERM/SIGINT.
import { createServer as createNetServer } from "node:net";
import { env as loadEnv, EnvError, type Env } from "./env.ts";
import { glibcMallocTrim, IdleMemoryTrim } from "./idle-memory-trim.ts";
import { log, setLogFormat, setLogLevel } from "./log.ts";

let env: Env;
try {
  env = loadEnv();
} catch (error) {
  if (error instanceof EnvError) {
    process.stderr.write(`tollgate: ${error.message}\n`);
    process.exit(1);
  }
  throw error;
}
setLogFormat(env.TOLLGATE_LOG_FORMAT);
setLogLevel(env.TOLLGATE_LOG_LEVEL);

const dev = process.argv.includes("--dev");

function exitPortInUse(): never {
  process.stderr.write(`tollgate: port ${env.PORT} on ${env.HOST} is in use (EADDRINUSE): stop what listens there, or choose another with PORT (0 takes a free one)\n`);
  process.exit(1);
}

/** Whether the port can be listened on now; errors other than "in use" are left to the server's own listen. */
function portIsFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createNetServer();
    probe.once("error", (error: NodeJS.ErrnoException) => resolve(error.code !== "EADDRINUSE"));
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
}

// Checked before the server's code is loaded and its database opened: a second copy
// started by mistake says so at once and touches nothing.
if (env.PORT !== 0 && !(await portIsFree(env.PORT, env.HOST))) exitPortInUse();
const { startTracing } = await import("./observability/tracing.ts");
const tracing = startTracing();
if (tracing) log.info("OpenTelemetry: exporting spans over OTLP/HTTP");
const { startServer } = await import("./http.ts");
const server = await startServer({ env, dev, withConsole: env.TOLLGATE_CONSOLE === "on" }).catch((error: unknown) => {
  // Taken meanwhile (two copies starting at once). Said and ended here: left to the
  // uncaught-exception handler, the process would linger without serving.
  if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") exitPortInUse();
  throw error;
});

log.info(`Tollgate listening on ${server.url} (${server.database.target} database: ${server.database.location})`);
const { admin, agentKey } = server.bootstrap;
if (admin) {
  log.info(`bootstrap admin: ${admin.email} / ${admin.generated ? admin.password : "(password from TOLLGATE_ADMIN_PASSWORD)"}`);
}
if (agentKey) {
  log.info(`bootstrap agent key: ${agentKey.generated ? agentKey.key : "(from TOLLGATE_AGENT_KEY)"}`);
}

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    // First out of the load balancer's rotation (still serving), then closed:
    // long-polls answer, sockets are told to reconnect (to another node), in-flight work finishes.
    server.drain();
    const drainMs = env.TOLLGATE_DRAIN_SECONDS * 1000;
    log.info(`${signal}: ${drainMs ? `not ready for ${env.TOLLGATE_DRAIN_SECONDS} s, then ` : ""}finishing in-flight requests and stopping`);
    const forced = setTimeout(() => {
      log.warn("shutdown took longer than 20 s after draining; exiting");
      process.exit(1);
    }, drainMs + 20_000);
    forced.unref();
    const drained = new Promise((resolve) => setTimeout(resolve, drainMs));
    drained.then(() => server.close()).then(() => tracing?.shutdown()).then(
      () => process.exit(0),
      (error: unknown) => {
        log.error("shutdown failed", error);
        process.exit(1);
      },
    );
  });
}

// Per process, not per server: the allocator is the process's. Started after
// the signal handlers, and never in the way of the server: a failure only logs.
if (env.TOLLGATE_TRIM_IDLE_MEMORY === "on") {
  void glibcMallocTrim()
    .then((trim) => trim && new IdleMemoryTrim({ trim }).start())
    .catch((error: unknown) => log.warn("the allocator's free memory will not be handed back", error));
}
