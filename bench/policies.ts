// Policy figures for npm run bench: the approval round trip with 100 rules
// loaded, the auto-approved call, and evaluating 100 rules in process.
import { createTRPCClient } from "@trpc/client";
import type { AppRouter } from "../server/api/router.ts";
import { compilePolicySet, evaluatePolicies, type PolicyRule } from "../server/domain/policy.ts";
import { createTollgate } from "../sdk/src/index.ts";
import { percentile } from "./stats.ts";
import { warmUpInProcess } from "./warm-up.ts";

type OperatorClient = ReturnType<typeof createTRPCClient<AppRouter>>;

const RULES = 100;

/** 99 rules that a send_email call must walk past (each fails only on its last argument condition), then one that approves auto_* tools. */
export async function loadHundredRules(operator: OperatorClient): Promise<void> {
  for (let index = 0; index < RULES - 1; index++) {
    await operator.policy.create.mutate({
      name: `bench rule ${index}`,
      match: { tool: "*", agent: "bench-*", args: [{ path: "$.i", op: "gte", value: 0 }, { path: "$.region", op: "eq", value: `region-${index}` }] },
      outcome: "reject",
      message: "not in this region",
    });
  }
  await operator.policy.create.mutate({ name: "bench: automatic lookups", match: { tool: "auto_*" }, outcome: "approve" });
}

/** approval.request answered by a rule, end to end over HTTP: p50 in ms. */
export async function autoApproved(url: string, agentKey: string, count: number): Promise<number> {
  // No held connection: a rule answers in the call, and an open one would hear every decision of the key.
  const sdk = createTollgate({ url, apiKey: agentKey, push: false });
  const { sessionId } = await sdk.openSession({ title: "bench: auto-approved" });
  const request = await sdk.begin({ sessionId, agent: "bench-agent" });
  const ask = async (i: number) => {
    const result = await sdk.call("approval.request", { requestId: request.requestId, tool: "auto_lookup", args: { i } });
    if (result.status !== "APPROVED") throw new Error(`auto-approved call ${i} ended ${result.status}`);
  };
  await warmUpInProcess(ask);
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await ask(i);
    samples.push(performance.now() - started);
  }
  return percentile(samples, 50);
}

/**
 * approval.request answered by a rule, `agents` agents at once, each asking on
 * its own request in a loop for `seconds`: calls per second. Every decision is
 * audited, so the agents' calls all chain to the workspace's one audit head.
 */
export async function autoApprovedRate(url: string, agentKey: string, agents: number, seconds: number): Promise<number> {
  const sdk = createTollgate({ url, apiKey: agentKey });
  const { sessionId } = await sdk.openSession({ title: "bench: auto-approved, many agents" });
  const requests = await Promise.all(Array.from({ length: agents }, (_, index) => sdk.begin({ sessionId, agent: `bench-agent-${index}` })));
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let answered = 0;
  await Promise.all(
    requests.map(async ({ requestId }, index) => {
      while (performance.now() < deadline) {
        const result = await sdk.call("approval.request", { requestId, tool: "auto_lookup", args: { i: index } });
        if (result.status !== "APPROVED") throw new Error(`auto-approved call of agent ${index} ended ${result.status}`);
        answered += 1;
      }
    }),
  );
  const rate = answered / ((performance.now() - started) / 1000);
  sdk.close();
  return rate;
}

/** Evaluating 100 compiled rules in process for a call that walks all of them: p50 in microseconds. */
export function evaluationMicros(): number {
  const rules: PolicyRule[] = Array.from({ length: RULES }, (_, index) => ({
    id: `pol_${index}`,
    name: `rule ${index}`,
    version: 1,
    priority: index,
    enabled: true,
    remembered: false,
    createdAt: new Date(0),
    expiresAt: null,
    match: { tool: "*", agent: "bench-*", args: [{ path: "$.i", op: "gte", value: 0 }, { path: "$.to", op: "matches", value: `@region-${index}\\.example$` }] },
    outcome: "reject",
    message: "no",
    role: "OPERATOR",
    approvers: 1,
    allow: [],
    timeoutMs: null,
    onTimeout: "reject",
    allowApproveOnTimeout: false,
    route: null,
    riskLabel: null,
    riskPaths: [],
  }));
  const set = compilePolicySet(rules);
  const facts = { agent: "bench-agent", tool: "send_email", agentKeyId: null, sessionId: null, sessionMetadata: null, args: { i: 1, to: "someone@example.com" } };
  const samples: number[] = [];
  for (let i = 0; i < 5_000; i++) {
    const started = performance.now();
    evaluatePolicies(set, facts, new Date());
    samples.push((performance.now() - started) * 1000);
  }
  return percentile(samples.slice(500), 50);
}
