// One demo service (orchestrator or agent), run as its own process:
// `node --import tsx demo/agent.ts A2`. It registers each invocation with
// Tollgate, calls the services below it over HTTP, and gates risky tools.
import { createServer } from "node:http";
import { createTollgate } from "../sdk/src/index.ts";
import { postJson } from "./http.ts";
import { serviceUrl, topology, type Role } from "./topology.ts";

const role = process.argv[2] as Role;
const spec = topology[role];
if (!spec) {
  console.error(`usage: demo/agent.ts <${Object.keys(topology).join("|")}>`);
  process.exit(2);
}
const tollgateUrl = process.env.TOLLGATE_URL ?? "http://127.0.0.1:3000";
const apiKey = process.env.TOLLGATE_AGENT_KEY;
if (!apiKey) {
  console.error("TOLLGATE_AGENT_KEY is required");
  process.exit(2);
}
const tollgate = createTollgate({ url: tollgateUrl, apiKey });

export interface Invocation {
  sessionId: string;
  parentRequestId?: string;
  /** Set for a follow-on invocation of an existing task. */
  taskId?: string;
  input: { customer: string; followOn?: boolean };
}

export interface InvocationResult {
  taskId: string;
  requestId: string;
  output: unknown;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function handle(invocation: Invocation): Promise<InvocationResult> {
  const request = await tollgate.begin({
    sessionId: invocation.sessionId,
    agent: role,
    kind: spec.kind,
    taskId: invocation.taskId,
    parentRequestId: invocation.parentRequestId,
    input: invocation.input,
  });
  // Orchestrators keep their routing explicitly; agents save what changed at
  // the end of each request. Stateless agents get their earlier tool calls
  // back (restore); the stateful email agent keeps one conversation (reference).
  const thread = request.thread(
    spec.kind === "orchestrator"
      ? { saving: "explicit" }
      : { saving: "implicit", continuity: role === "A2" ? "reference" : "restore", keepToolCalls: 10 },
  );
  try {
    await thread.load();
    if (!thread.config) await thread.configure(threadConfig(), ownershipRules());
    const output = spec.kind === "orchestrator" ? await orchestrate(request.requestId, invocation, thread) : await work(request, invocation, thread);
    await request.complete(output.output);
    return { taskId: request.taskId, requestId: request.requestId, ...output };
  } catch (error) {
    await request.fail({ message: (error as Error).message }).catch(() => undefined);
    throw error;
  }
}

type Thread = ReturnType<Awaited<ReturnType<typeof tollgate.begin>>["thread"]>;

function threadConfig() {
  return { enabledTools: role === "A2" ? ["send_email"] : [], description: spec.description };
}

/** Routing is the orchestrator's; the customer record is shared; underscore keys are request scratch. */
function ownershipRules() {
  return {
    rules: [
      { match: { key: "route" }, owner: "ORCHESTRATOR" as const },
      { match: { key: "customer" }, owner: "SHARED" as const, protocol: "last-writer-wins; set by whichever agent talked to the customer last" },
    ],
    default: "SHARED" as const,
  };
}

async function orchestrate(requestId: string, invocation: Invocation, thread: Thread) {
  // The tasks this orchestrator created last time, from its own thread state.
  const known = ((thread.state?.route as Partial<Record<Role, string>> | undefined) ?? {});
  // A follow-on goes back to the email agent's existing task; a first invocation fans out.
  const targets: Role[] = invocation.input.followOn ? spec.calls.filter((child) => child === "A2") : spec.calls;
  const results = await Promise.all(
    targets.map((child) =>
      postJson<InvocationResult>(`${serviceUrl(child)}/invoke`, {
        sessionId: invocation.sessionId,
        parentRequestId: requestId,
        taskId: invocation.input.followOn ? known[child] : undefined,
        input: { customer: invocation.input.customer, followOn: invocation.input.followOn },
      } satisfies Invocation).then((result) => [child, result] as const),
    ),
  );
  const route: Partial<Record<Role, string>> = { ...known };
  for (const [child, result] of results) route[child] = result.taskId;
  await thread.save({ ...thread.state, route, customer: invocation.input.customer });
  return { output: Object.fromEntries(results.map(([child, result]) => [child, result.output])) };
}

async function work(request: Awaited<ReturnType<typeof tollgate.begin>>, invocation: Invocation, thread: Thread) {
  const customer = invocation.input.customer;
  const { toolCalls, conversationId } = await thread.start();
  const tool = `${role.toLowerCase()}_lookup`;
  await sleep(100 + Math.random() * 300);
  await thread.recordToolCall({ tool, args: { customer }, result: { found: true, earlierCalls: toolCalls.length } });
  await thread.touch([{ id: customer.toLowerCase().replace(/\W+/g, "-"), name: customer, type: "customer" }]);
  thread.state!.customer = customer;
  thread.state!.requests = ((thread.state!.requests as number | undefined) ?? 0) + 1;
  if (conversationId) thread.state!.conversationId = conversationId;
  if (role === "A2" && invocation.input.followOn) {
    const outcome = await request.gate(
      "send_email",
      { to: `${customer.toLowerCase().replace(/\W+/g, ".")}@example.com`, subject: "Your refund", body: `Hello ${customer}, your refund of $42 is on its way.` },
      async (args) => ({ messageId: `msg-${Date.now()}`, sentTo: (args as { to: string }).to }),
      { reason: `${customer} asked for a refund confirmation by email`, timeoutMs: 15 * 60_000 },
    );
    return { output: outcome.outcome === "executed" ? { emailed: outcome.result } : { emailed: false, why: outcome.outcome, message: "message" in outcome ? outcome.message : undefined } };
  }
  return { output: { role, customer, note: spec.description, earlierToolCalls: toolCalls.length } };
}

const server = createServer((req, res) => {
  if (req.method !== "POST" || req.url !== "/invoke") return void res.writeHead(404).end();
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    handle(JSON.parse(body) as Invocation).then(
      (result) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(result)),
      (error: Error) => res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: error.message })),
    );
  });
});
// Invocations wait for humans: no server-side request timeout.
server.requestTimeout = 0;
server.listen(spec.port, "127.0.0.1", () => console.log(`${role} (${spec.description}) on ${serviceUrl(role)}`));
for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => server.close(() => process.exit(0)));
