import { describe, expect, it } from "vitest";
import { GateFactsCache, type GateFacts } from "./gate-facts-cache.ts";

const facts = (id: string): GateFacts => ({
  id,
  sessionId: "ses_1",
  taskId: "task_1",
  status: "RUNNING",
  agent: "billing-agent",
  keyAtOrAbove: true,
  metadata: null,
  config: null,
  policyVersion: 1,
  defaultTimeoutMs: null,
  defaultOnTimeout: "reject",
  defaultRoute: null,
  channelVersion: 0,
  fingerprint: `fp_${id}`,
});

describe("the gate facts cache", () => {
  it("keys facts by workspace, request and key", () => {
    const cache = new GateFactsCache();
    cache.remember("ws_1", "req_1", "key_1", facts("req_1"));
    expect(cache.get("ws_1", "req_1", "key_1")?.fingerprint).toBe("fp_req_1");
    expect(cache.get("ws_1", "req_1", "key_2")).toBeUndefined();
    expect(cache.get("ws_2", "req_1", "key_1")).toBeUndefined();
    cache.forget("ws_1", "req_1", "key_1");
    expect(cache.get("ws_1", "req_1", "key_1")).toBeUndefined();
  });

  it("when full, forgets the request asked on least recently, and keeps the rest", () => {
    const cache = new GateFactsCache();
    for (let i = 0; i < 10_000; i++) cache.remember("ws_1", `req_${i}`, "key_1", facts(`req_${i}`));
    cache.get("ws_1", "req_0", "key_1");
    cache.remember("ws_1", "req_new", "key_1", facts("req_new"));
    expect(cache.get("ws_1", "req_1", "key_1")).toBeUndefined();
    expect(cache.get("ws_1", "req_0", "key_1")).toBeDefined();
    expect(cache.get("ws_1", "req_2", "key_1")).toBeDefined();
    expect(cache.get("ws_1", "req_new", "key_1")).toBeDefined();
  });
});
