// The reference scenario's services (ARCHITECTURE.md): who calls whom, and on
// which local port each one listens.
export type Role = "O1" | "O2" | "A1" | "A2" | "A3" | "A4";

export interface ServiceSpec {
  kind: "orchestrator" | "agent";
  port: number;
  /** Agents this one invokes on a first invocation. */
  calls: Role[];
  description: string;
}

export const BASE_PORT = Number(process.env.TOLLGATE_DEMO_BASE_PORT ?? 4100);

/** The ports the demo picked (scripts/demo-ports.mjs), else BASE_PORT + 1 to 6. */
const chosenPorts: Partial<Record<Role, number>> = JSON.parse(process.env.TOLLGATE_DEMO_AGENT_PORTS ?? "{}");
const portOf = (role: Role, offset: number) => chosenPorts[role] ?? BASE_PORT + offset;

export const topology: Record<Role, ServiceSpec> = {
  O1: { kind: "orchestrator", port: portOf("O1", 1), calls: ["A1", "A2", "O2"], description: "customer-support orchestrator" },
  A1: { kind: "agent", port: portOf("A1", 2), calls: [], description: "looks up the customer" },
  A2: { kind: "agent", port: portOf("A2", 3), calls: [], description: "drafts and sends emails (sending needs approval)" },
  O2: { kind: "orchestrator", port: portOf("O2", 4), calls: ["A3", "A4"], description: "billing orchestrator" },
  A3: { kind: "agent", port: portOf("A3", 5), calls: [], description: "reads invoices" },
  A4: { kind: "agent", port: portOf("A4", 6), calls: [], description: "computes refunds" },
};

export const serviceUrl = (role: Role) => `http://127.0.0.1:${topology[role].port}`;
