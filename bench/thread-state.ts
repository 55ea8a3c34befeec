// Thread-state targets, measured over real HTTP against a running server:
// state.save of a ~100 KB state (target: p50 <= 20 ms) and state.diff between
// two ~1 MB versions (target: p50 <= 100 ms), on the embedded database.
import { createTRPCClient, httpLink } from "@trpc/client";
import { undiciFetch } from "./undici-fetch.ts";
import type { AppRouter } from "../server/api/router.ts";
import { createTollgate } from "../sdk/src/index.ts";
import { percentile } from "./stats.ts";

export interface ThreadStateBenchTarget {
  url: string;
  agentKey: string;
  admin: { email: string; password: string };
}

export interface ThreadStateBenchOptions {
  /** Measured saves (after warmup). Default 50. */
  saves?: number;
  /** Measured diffs (after warmup). Default 20. */
  diffs?: number;
  /** Unmeasured calls first. Default 5. */
  warmup?: number;
  /** Size of the saved state. Default 100 KB. */
  saveStateBytes?: number;
  /** Size of each diffed version. Default 1 MB. */
  diffStateBytes?: number;
}

export interface Timing {
  p50Ms: number;
  p95Ms: number;
  samples: number[];
}

export interface ThreadStateBenchResult {
  save: Timing & { stateBytes: number };
  diff: Timing & { stateBytes: number; operations: number };
}

const now = () => performance.now();

/**
 * A state of about `bytes` bytes as JSON: customer records with nested arrays,
 * the shape an agent's working state tends to have. `variant` changes ~1% of
 * the records (edits, one removal, one insertion) so versions differ a little.
 */
export function sampleState(bytes: number, variant = 0): Record<string, unknown> {
  const records: Record<string, unknown>[] = [];
  let size = 0;
  for (let i = 0; size < bytes - 200; i++) {
    const record = {
      id: `cus_${i}`,
      name: `Customer ${i}`,
      tags: ["lead", i % 3 ? "emea" : "amer", `tier-${i % 5}`],
      orders: [{ id: `ord_${i}_1`, total: i * 3.5, lines: [i % 7, i % 11] }],
      notes: "lorem ipsum dolor sit amet ".repeat(2),
    };
    size += JSON.stringify(record).length + 1;
    records.push(record);
  }
  if (variant > 0) {
    for (let i = variant; i < records.length; i += 100) {
      const record = records[i]!;
      record.tags = [...(record.tags as string[]), `v${variant}`];
      (record.orders as { lines: number[] }[])[0]!.lines.push(variant);
    }
    records.splice(variant % records.length, 1);
    records.splice(Math.floor(records.length / 2), 0, { id: `cus_new_${variant}`, name: "New", tags: [], orders: [], notes: "" });
  }
  return { customers: records, cursor: { page: variant, seen: records.length }, summary: `state variant ${variant}` };
}

const timing = (samples: number[]): Timing => ({ p50Ms: percentile(samples, 50), p95Ms: percentile(samples, 95), samples });

/**
 * Measures both targets against a started server (a BenchServer from
 * ./server.ts fits `target`): saves of a ~100 KB state, each based on the
 * previous version and changing one field, and diffs between two ~1 MB
 * versions. Returns p50, p95 and every sample in milliseconds.
 */
export async function benchThreadState(target: ThreadStateBenchTarget, options: ThreadStateBenchOptions = {}): Promise<ThreadStateBenchResult> {
  const saves = options.saves ?? 50;
  const diffs = options.diffs ?? 20;
  const warmup = options.warmup ?? 5;
  // No held connection: it waits for no decision, and an open one would hear every decision of the key.
  const sdk = createTollgate({ url: target.url, apiKey: target.agentKey, push: false });
  const operator = await operatorClient(target);

  // state.save: each save changes one field of a ~100 KB state, based on the last version.
  const { sessionId } = await sdk.openSession({ title: "bench: thread state" });
  const saving = await sdk.begin({ sessionId, agent: "bench-state" });
  await sdk.call("thread.configure", { taskId: saving.taskId, config: {} });
  const state = sampleState(options.saveStateBytes ?? 100 * 1024);
  const stateBytes = Buffer.byteLength(JSON.stringify(state));
  let version = 0;
  const saveSamples: number[] = [];
  for (let i = 0; i < warmup + saves; i++) {
    state.cursor = { page: i };
    const started = now();
    const saved = await sdk.call("state.save", { taskId: saving.taskId, requestId: saving.requestId, state: state as never, baseVersion: version });
    const elapsed = now() - started;
    version = saved.version;
    if (i >= warmup) saveSamples.push(elapsed);
  }

  // state.diff between two ~1 MB versions that differ in ~1% of their records.
  const diffing = await sdk.begin({ sessionId, agent: "bench-diff" });
  await sdk.call("thread.configure", { taskId: diffing.taskId, config: {} });
  const big = options.diffStateBytes ?? 1024 * 1024;
  const v1 = sampleState(big, 0);
  await sdk.call("state.save", { taskId: diffing.taskId, requestId: diffing.requestId, state: v1 as never });
  await sdk.call("state.save", { taskId: diffing.taskId, requestId: diffing.requestId, state: sampleState(big, 1) as never });
  const diffSamples: number[] = [];
  let operations = 0;
  for (let i = 0; i < warmup + diffs; i++) {
    const started = now();
    const diff = await operator.state.diff.query({ taskId: diffing.taskId, fromVersion: 1, toVersion: 2 });
    const elapsed = now() - started;
    operations = diff.operations.length;
    if (i >= warmup) diffSamples.push(elapsed);
  }
  await sdk.call("request.complete", { requestId: saving.requestId });
  await sdk.call("request.complete", { requestId: diffing.requestId });

  return {
    save: { ...timing(saveSamples), stateBytes },
    diff: { ...timing(diffSamples), stateBytes: Buffer.byteLength(JSON.stringify(v1)), operations },
  };
}

async function operatorClient(target: ThreadStateBenchTarget) {
  const login = await fetch(`${target.url}/api/trpc/auth.login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(target.admin),
  });
  if (!login.ok) throw new Error(`bench: operator login failed with ${login.status}`);
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
  return createTRPCClient<AppRouter>({ links: [httpLink({ url: `${target.url}/api/trpc`, headers: { cookie, origin: new URL(target.url).origin }, fetch: undiciFetch })] });
}
