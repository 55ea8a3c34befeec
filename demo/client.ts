// The demo's client: every few seconds a new customer conversation runs the
// reference scenario against O1 — a first invocation, then a follow-on whose
// email needs an operator's approval.
import { createTollgate } from "../sdk/src/index.ts";
import { postJson } from "./http.ts";
import { serviceUrl } from "./topology.ts";
import type { Invocation, InvocationResult } from "./agent.ts";

const tollgate = createTollgate({ url: process.env.TOLLGATE_URL ?? "http://127.0.0.1:3000", apiKey: process.env.TOLLGATE_AGENT_KEY! });
const everyMs = Number(process.env.TOLLGATE_DEMO_EVERY_MS ?? 8_000);
// Stop adding conversations while this many wait for a human.
const maxWaiting = Number(process.env.TOLLGATE_DEMO_MAX_WAITING ?? 5);
const customers = ["Ada Lovelace", "Grace Hopper", "Alan Turing", "Katherine Johnson", "Edsger Dijkstra", "Barbara Liskov", "Donald Knuth"];
let waiting = 0;
let counter = 0;

async function conversation(customer: string) {
  const { sessionId } = await tollgate.openSession({ title: `Refund for ${customer}`, metadata: { customer } });
  const first = await postJson<InvocationResult>(`${serviceUrl("O1")}/invoke`, { sessionId, input: { customer } } satisfies Invocation);
  waiting += 1;
  try {
    await postJson<InvocationResult>(`${serviceUrl("O1")}/invoke`, {
      sessionId,
      taskId: first.taskId,
      input: { customer, followOn: true },
    } satisfies Invocation);
    console.log(`conversation ${sessionId} (${customer}) completed`);
  } finally {
    waiting -= 1;
  }
}

async function tick() {
  if (waiting < maxWaiting) {
    const customer = customers[counter++ % customers.length]!;
    conversation(customer).catch((error: Error) => console.error(`conversation for ${customer} failed: ${error.message}`));
  }
}

void tick();
setInterval(() => void tick(), everyMs);
