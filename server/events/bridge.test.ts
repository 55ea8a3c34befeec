import { describe, expect, it } from "vitest";
import { bridgeBus, type BridgeTransport } from "./bridge.ts";
import { EventBus, type TollgateEvents } from "./bus.ts";

/** Two buses joined by an in-memory channel that carries at most `maxMessageBytes`. */
async function joined(maxMessageBytes?: number) {
  const listeners: ((message: string) => void)[] = [];
  const resumed: (() => void)[] = [];
  const transport = (): BridgeTransport => ({
    name: "memory",
    maxMessageBytes,
    publish: async (message) => listeners.forEach((listener) => listener(message)),
    subscribe: async (listener) => void listeners.push(listener),
    onResumed: (listener) => void resumed.push(listener),
    close: async () => undefined,
  });
  const [a, b] = [new EventBus(), new EventBus()];
  await Promise.all([bridgeBus(a, transport()), bridgeBus(b, transport())]);
  /** What a transport does when its connection comes back. */
  const reconnect = () => resumed.forEach((listener) => listener());
  return { a, b, reconnect };
}

const requested = (args: unknown): TollgateEvents["approval:requested"] => ({
  workspaceId: "wsp_1",
  approvalId: "apr_1",
  requestId: "req_1",
  taskId: "tsk_1",
  sessionId: "ses_1",
  tool: "send_email",
  args,
  status: "PENDING",
  expiresAt: null,
});

describe("event bridge", () => {
  it("carries a node's own events to the other node once, marked remote, and never back", async () => {
    const { a, b } = await joined();
    const onA: string[] = [];
    const onB: string[] = [];
    a.on("approval:requested", (_, origin) => onA.push(origin));
    b.on("approval:requested", (_, origin) => onB.push(origin));
    a.publish("approval:requested", requested({ to: "x" }));
    await Promise.resolve();
    expect(onA).toEqual(["local"]);
    expect(onB).toEqual(["remote"]);
  });

  it("leaves a request's arguments (or a decision) out when the event is too large for the channel, and drops what still does not fit", async () => {
    const { a, b } = await joined(600);
    const heard: unknown[] = [];
    b.on("approval:requested", (event) => heard.push(event));
    a.publish("approval:requested", requested({ body: "x".repeat(2_000) }));
    await Promise.resolve();
    expect(heard).toEqual([expect.objectContaining({ approvalId: "apr_1", args: null, argsOmitted: true })]);

    const decided: unknown[] = [];
    b.on("approval:decided", (event) => decided.push(event));
    a.publish("approval:decided", {
      workspaceId: "ws_1",
      sessionId: "ses_1",
      taskId: "tsk_1",
      approvalId: "apr_1",
      requestId: "req_1",
      agentKeyId: null,
      status: "APPROVED",
      decision: { action: "edit", args: { body: "x".repeat(2_000) }, decidedBy: "ops@example.com", decidedAt: "2026-11-27T12:03:00.000Z" },
    });
    await Promise.resolve();
    expect(decided).toEqual([expect.objectContaining({ approvalId: "apr_1", status: "APPROVED", decision: null, decisionOmitted: true })]);

    const states: unknown[] = [];
    b.on("session:updated", (event) => states.push(event));
    a.publish("session:updated", { workspaceId: "w".repeat(1_000), sessionId: "ses_1" });
    await Promise.resolve();
    expect(states).toEqual([]);
  });

  it("a link that comes back tells this node's clients to read again, and the news stays on this node", async () => {
    const { a, b, reconnect } = await joined();
    const heard: string[] = [];
    a.on("bridge:resumed", ({ transport }, origin) => heard.push(`a ${transport} ${origin}`));
    b.on("bridge:resumed", ({ transport }, origin) => heard.push(`b ${transport} ${origin}`));
    reconnect();
    await Promise.resolve();
    expect(heard.sort()).toEqual(["a memory local", "b memory local"]);
  });
});
