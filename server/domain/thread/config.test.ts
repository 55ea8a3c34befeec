import { describe, expect, it } from "vitest";
import { errorOf } from "../testing.ts";
import { getConfigValue, isToolEnabled, parseThreadConfig, toolAllowedByConfig, type ThreadConfig } from "./config.ts";


describe("isToolEnabled", () => {
  const cases: [string, ThreadConfig | null | undefined, boolean][] = [
    ["a listed tool is enabled", { enabledTools: ["search", "send_email"] }, true],
    ["an unlisted tool is not enabled", { enabledTools: ["search"] }, false],
    ["an empty list enables nothing", { enabledTools: [] }, false],
    ["a config without enabledTools enables nothing explicitly", { model: "x" }, false],
    ["a missing config (null) enables nothing", null, false],
    ["a missing config (undefined) enables nothing", undefined, false],
  ];
  it.each(cases)("config: %s", (_name, config, expected) => {
    expect(isToolEnabled(config, "send_email")).toBe(expected);
  });
});

describe("toolAllowedByConfig", () => {
  const cases: [string, ThreadConfig | null | undefined, boolean][] = [
    ["a listed tool is allowed", { enabledTools: ["send_email"] }, true],
    ["an unlisted tool is refused", { enabledTools: ["search"] }, false],
    ["an empty list refuses every tool", { enabledTools: [] }, false],
    ["no enabledTools means no restriction", { model: "x" }, true],
    ["no config means no restriction", null, true],
    ["an undefined config means no restriction", undefined, true],
  ];
  it.each(cases)("gating: %s", (_name, config, expected) => {
    expect(toolAllowedByConfig(config, "send_email")).toBe(expected);
  });
});

describe("getConfigValue", () => {
  const config: ThreadConfig = { model: "gpt", limits: { max: 3 }, "a.b": "dotted key", zero: 0 };

  it("config: a top-level key returns its value", () => {
    expect(getConfigValue(config, "model")).toBe("gpt");
    expect(getConfigValue(config, "limits")).toEqual({ max: 3 });
    expect(getConfigValue(config, "zero")).toBe(0);
  });

  it("config: a dotted key is a key name, not a path into nested objects", () => {
    expect(getConfigValue(config, "limits.max")).toBeUndefined();
    expect(getConfigValue(config, "a.b")).toBe("dotted key");
  });

  it("config: missing keys, inherited properties and a missing config read as undefined", () => {
    expect(getConfigValue(config, "absent")).toBeUndefined();
    expect(getConfigValue(config, "constructor")).toBeUndefined();
    expect(getConfigValue(config, "toString")).toBeUndefined();
    expect(getConfigValue(null, "model")).toBeUndefined();
    expect(getConfigValue(undefined, "model")).toBeUndefined();
  });
});

describe("parseThreadConfig", () => {
  it("config: a JSON object with valid enabledTools is accepted as is", () => {
    const value = { enabledTools: ["search", "send_email"], temperature: 0.2, nested: { list: [1, null, "x"] } };
    expect(parseThreadConfig(value)).toEqual(value);
  });

  it("config: an object without enabledTools is accepted", () => {
    expect(parseThreadConfig({})).toEqual({});
  });

  it("config: an object parsed from JSON with a __proto__ key is still a plain object", () => {
    const value: unknown = JSON.parse('{"__proto__": {"x": 1}, "enabledTools": []}');
    expect(parseThreadConfig(value)).toEqual(value);
  });

  const notObjects: [string, unknown][] = [
    ["null", null],
    ["an array", ["search"]],
    ["a string", "search"],
    ["a number", 3],
    ["undefined", undefined],
    ["a Date", new Date(0)],
    ["a Map", new Map()],
  ];
  it.each(notObjects)("config: %s is refused as BAD_INPUT naming the config", (_name, value) => {
    const error = errorOf(() => parseThreadConfig(value));
    expect(error.code).toBe("BAD_INPUT");
    expect(error.message).toMatch(/^thread config must be a JSON object/);
    expect(error.details).toEqual({ field: "config" });
  });

  const badTools: [string, unknown, string, RegExp][] = [
    ["a string instead of an array", "search", "config.enabledTools", /must be an array of tool names/],
    ["null", null, "config.enabledTools", /must be an array of tool names, got null/],
    ["an empty name", ["search", ""], "config.enabledTools[1]", /must be a non-empty tool name/],
    ["a blank name", ["  "], "config.enabledTools[0]", /must be a non-empty tool name/],
    ["a number", ["search", 7], "config.enabledTools[1]", /must be a non-empty tool name, got number 7/],
    ["a duplicate", ["search", "mail", "search"], "config.enabledTools[2]", /lists "search" twice \(at 0 and 2\); list each tool once/],
  ];
  it.each(badTools)("config: enabledTools as %s is BAD_INPUT naming the field", (_name, enabledTools, field, message) => {
    const error = errorOf(() => parseThreadConfig({ enabledTools }));
    expect(error.code).toBe("BAD_INPUT");
    expect(error.details).toEqual({ field });
    expect(error.message).toMatch(message);
  });

  const nonJson: [string, Record<string, unknown>, string][] = [
    ["NaN", { limits: { max: Number.NaN } }, "config.limits.max"],
    ["Infinity", { ratio: Number.POSITIVE_INFINITY }, "config.ratio"],
    ["undefined in an array", { list: [1, undefined] }, "config.list[1]"],
    ["a function", { hook: () => 1 }, "config.hook"],
    ["a Date", { since: new Date(0) }, "config.since"],
    ["a bigint", { big: 10n }, "config.big"],
  ];
  it.each(nonJson)("config: a nested %s is BAD_INPUT naming its path", (_name, value, field) => {
    const error = errorOf(() => parseThreadConfig(value));
    expect(error.code).toBe("BAD_INPUT");
    expect(error.details).toEqual({ field });
    expect(error.message).toContain(field);
  });

  it("config: a cycle is refused instead of recursing forever", () => {
    const value: Record<string, unknown> = { a: {} };
    (value.a as Record<string, unknown>).back = value;
    const error = errorOf(() => parseThreadConfig(value));
    expect(error.code).toBe("BAD_INPUT");
    expect(error.details).toEqual({ field: "config.a.back" });
  });

  it("config: the same object twice (not a cycle) is fine", () => {
    const shared = { x: 1 };
    expect(parseThreadConfig({ a: shared, b: shared })).toEqual({ a: { x: 1 }, b: { x: 1 } });
  });

  it("config: a config over the size limit is PAYLOAD_TOO_LARGE", () => {
    const error = errorOf(() => parseThreadConfig({ blob: "x".repeat(70 * 1024) }));
    expect(error.code).toBe("PAYLOAD_TOO_LARGE");
    expect(error.message).toMatch(/over the 65536-byte limit/);
  });
});
