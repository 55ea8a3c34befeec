// The demos' ports: what the environment names, else free ones, so a second
// checkout's demo (or its tests) never collides with this one.
import { createServer } from "node:net";

/** A port the system says is free now on 127.0.0.1; `preferred` when it is free. */
export function freePort(preferred = 0) {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error) => (preferred ? freePort().then(resolve, reject) : reject(error)));
    probe.listen(preferred, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * The console's port (PORT, else 3000 when free, else any free one), the
 * mailbox's (TOLLGATE_DEMO_SMTP_PORT) and the six agent services'
 * (TOLLGATE_DEMO_BASE_PORT + 1 to 6), as the environment the demo's
 * processes read: TOLLGATE_DEMO_AGENT_PORTS carries the agents' to each other.
 */
export async function demoPorts(env = process.env) {
  const port = env.PORT ? Number(env.PORT) : await freePort(3000);
  const smtpPort = env.TOLLGATE_DEMO_SMTP_PORT ? Number(env.TOLLGATE_DEMO_SMTP_PORT) : await freePort();
  const agentPorts = {};
  for (const [index, role] of ["O1", "A1", "A2", "O2", "A3", "A4"].entries()) {
    agentPorts[role] = env.TOLLGATE_DEMO_BASE_PORT ? Number(env.TOLLGATE_DEMO_BASE_PORT) + index + 1 : await freePort();
  }
  return { port, smtpPort, agentPorts };
}

/** One line per service, for the banner. */
export function describePorts({ smtpPort, agentPorts }, withMailbox = true) {
  const agents = Object.entries(agentPorts)
    .map(([role, port]) => `${role} ${port}`)
    .join(", ");
  return `${withMailbox ? `  Mailbox (SMTP): 127.0.0.1:${smtpPort}\n` : ""}  Agent services: ${agents}`;
}
