import { describe, expect, it } from "vitest";
import { errorOf } from "../testing.ts";
import {
  DEFAULT_KEEP_TOOL_CALLS,
  continuityKey,
  nextContinuity,
  pruneToolHistory,
  referenceFor,
  type ContinuityState,
  type ToolCallRecord,
} from "./continuity.ts";


function call(n: number, requestId = "req_1", extra: Partial<ToolCallRecord> = {}): ToolCallRecord {
  return { requestId, callId: `call_${n}`, tool: "search", args: { q: n }, result: { hits: n }, at: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString(), ...extra };
}

const calls = (count: number, requestId?: string) => Array.from({ length: count }, (_, i) => call(i + 1, requestId));

function sequence<T>(...values: T[]): () => T {
  let i = 0;
  return () => {
    const value = values[i++];
    if (value === undefined) throw new Error("the id generator was called more often than expected");
    return value;
  };
}

describe("pruneToolHistory", () => {
  it("continuity: the last N tool calls are kept, oldest first", () => {
    expect(pruneToolHistory(calls(5), 2).map((c) => c.callId)).toEqual(["call_4", "call_5"]);
  });

  it("continuity: the default keeps the last 20", () => {
    const kept = pruneToolHistory(calls(25));
    expect(DEFAULT_KEEP_TOOL_CALLS).toBe(20);
    expect(kept).toHaveLength(20);
    expect(kept[0]?.callId).toBe("call_6");
  });

  it("continuity: a shorter history is kept whole, and 0 keeps nothing", () => {
    expect(pruneToolHistory(calls(3), 10)).toHaveLength(3);
    expect(pruneToolHistory(calls(3), 0)).toEqual([]);
    expect(pruneToolHistory([], 5)).toEqual([]);
  });

  it("continuity: a call and its result stay together in one record", () => {
    const [kept] = pruneToolHistory(calls(3), 1);
    expect(kept).toEqual(call(3));
  });

  it("continuity: the input history is not modified", () => {
    const history = calls(4);
    pruneToolHistory(history, 1);
    expect(history).toHaveLength(4);
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])("continuity: keepLast %s is BAD_INPUT", (keepLast) => {
    const error = errorOf(() => pruneToolHistory(calls(2), keepLast));
    expect(error.code).toBe("BAD_INPUT");
    expect(error.details).toEqual({ field: "keepLast" });
    expect(error.message).toMatch(/keepLast must be a whole number of tool calls, 0 or more/);
  });
});

describe("referenceFor", () => {
  it("continuity: the first request creates a conversation id", () => {
    expect(referenceFor(null, sequence("conv_1"))).toEqual({ conversationId: "conv_1", created: true });
  });

  it("continuity: later requests reuse the stored id without generating one", () => {
    expect(referenceFor("conv_1", sequence<string>())).toEqual({ conversationId: "conv_1", created: false });
  });

  it("continuity: an empty generated id is refused", () => {
    expect(errorOf(() => referenceFor(null, () => "")).code).toBe("BAD_INPUT");
  });
});

describe("continuityKey", () => {
  it("continuity: two agents in one task get different keys", () => {
    expect(continuityKey("tsk_3", "A2")).not.toBe(continuityKey("tsk_3", "A3"));
  });

  it("continuity: one agent in two tasks gets different keys", () => {
    expect(continuityKey("tsk_3", "A2")).not.toBe(continuityKey("tsk_5", "A2"));
  });

  it("continuity: an agent name with a colon cannot collide with another pair", () => {
    expect(continuityKey("tsk_3", "a:b")).toBe("tsk_3:a:b");
    expect(errorOf(() => continuityKey("tsk_3:a", "b")).code).toBe("BAD_INPUT");
  });

  it("continuity: an empty task id or agent is BAD_INPUT", () => {
    expect(errorOf(() => continuityKey("", "A2")).details).toEqual({ field: "taskId" });
    expect(errorOf(() => continuityKey("tsk_3", " ")).details).toEqual({ field: "agent" });
  });
});

describe("nextContinuity", () => {
  it("continuity: restore appends this request's calls to the history", () => {
    const first = nextContinuity(null, { strategy: "restore", toolCalls: calls(2, "req_1") });
    const second = nextContinuity(first, { strategy: "restore", toolCalls: [call(1, "req_2")] });
    expect(second).toEqual({ strategy: "restore", toolCalls: [call(1, "req_1"), call(2, "req_1"), call(1, "req_2")] });
  });

  it("continuity: restore prunes to keepLast across requests", () => {
    const previous: ContinuityState = { strategy: "restore", toolCalls: calls(3, "req_1") };
    const next = nextContinuity(previous, { strategy: "restore", toolCalls: calls(2, "req_2"), keepLast: 3 });
    expect(next.strategy === "restore" && next.toolCalls.map((c) => `${c.requestId}/${c.callId}`)).toEqual(["req_1/call_3", "req_2/call_1", "req_2/call_2"]);
  });

  it("continuity: a call reported again replaces its record in place instead of duplicating it", () => {
    const first = nextContinuity(null, { strategy: "restore", toolCalls: [call(1, "req_1", { result: undefined }), call(2)] });
    const retried = nextContinuity(first, { strategy: "restore", toolCalls: [call(1, "req_1", { result: "done" })] });
    expect(retried.strategy === "restore" && retried.toolCalls.map((c) => [c.callId, c.result])).toEqual([
      ["call_1", "done"],
      ["call_2", { hits: 2 }],
    ]);
  });

  it("continuity: a malformed tool call record is BAD_INPUT naming the field", () => {
    const missingTool = { ...call(1), tool: "" };
    expect(errorOf(() => nextContinuity(null, { strategy: "restore", toolCalls: [call(2), missingTool] })).details).toEqual({
      field: "toolCalls[1].tool",
    });
    const badTime = { ...call(1), at: "yesterday" };
    const error = errorOf(() => nextContinuity(null, { strategy: "restore", toolCalls: [badTime] }));
    expect(error.details).toEqual({ field: "toolCalls[0].at" });
    expect(error.message).toMatch(/not an ISO timestamp/);
  });

  it("continuity: reference creates an id on the first request and keeps it after", () => {
    const first = nextContinuity(null, { strategy: "reference", newId: sequence("conv_1") });
    expect(first).toEqual({ strategy: "reference", conversationId: "conv_1" });
    const second = nextContinuity(first, { strategy: "reference", newId: sequence<string>() });
    expect(second).toEqual({ strategy: "reference", conversationId: "conv_1" });
  });

  it("continuity: a strategy change starts fresh rather than reusing the other kind of state", () => {
    const restored: ContinuityState = { strategy: "restore", toolCalls: calls(2) };
    expect(nextContinuity(restored, { strategy: "reference", newId: sequence("conv_9") })).toEqual({ strategy: "reference", conversationId: "conv_9" });
    const referenced: ContinuityState = { strategy: "reference", conversationId: "conv_1" };
    expect(nextContinuity(referenced, { strategy: "restore", toolCalls: [call(1)] })).toEqual({ strategy: "restore", toolCalls: [call(1)] });
  });

  it("continuity: the previous state is not modified", () => {
    const previous: ContinuityState = { strategy: "restore", toolCalls: calls(2) };
    nextContinuity(previous, { strategy: "restore", toolCalls: [call(1, "req_2")], keepLast: 1 });
    expect(previous).toEqual({ strategy: "restore", toolCalls: calls(2) });
  });
});
