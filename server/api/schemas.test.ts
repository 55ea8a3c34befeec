import { describe, expect, it } from "vitest";
import { zJson, zJsonObject } from "./schemas.ts";

describe("zJson: a JSON value checked by its serialised size", () => {
  const small = zJson(1024);

  it("accepts any JSON value within the limit, nested or not", () => {
    for (const value of [null, 0, "text", true, [1, "two", { three: [null] }], { a: { b: [1, 2] } }]) {
      expect(small.safeParse(value)).toEqual({ success: true, data: value });
    }
  });

  it("refuses a value larger than the limit, saying so", () => {
    expect(small.safeParse({ text: "x".repeat(1000) }).success).toBe(true);
    const result = small.safeParse({ text: "x".repeat(1020) });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe("must be at most 1 KB as JSON");
  });

  it("refuses a number too large for JSON, which JSON.parse reads as Infinity, nested anywhere", () => {
    for (const body of ['{"amount":1e400}', '[1, {"deep": [-1e999]}]', "1e400"]) {
      const result = small.safeParse(JSON.parse(body));
      expect(result.success, body).toBe(false);
      expect(result.error?.issues[0]?.message).toBe("must not contain a number too large for JSON (it would be Infinity)");
    }
    expect(zJsonObject(1024).safeParse(JSON.parse('{"amount":1e400}')).success).toBe(false);
  });

  it("refuses a missing value, and values JSON cannot hold, without throwing", () => {
    expect(small.safeParse(undefined).success).toBe(false);
    expect(small.safeParse({ count: 1n }).success).toBe(false);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(small.safeParse(cycle).success).toBe(false);
  });

  it("zJsonObject accepts only an object of JSON values within the limit", () => {
    const object = zJsonObject(1024);
    expect(object.safeParse({ a: 1, b: [true] }).success).toBe(true);
    expect(object.safeParse([1, 2]).success).toBe(false);
    expect(object.safeParse("text").success).toBe(false);
    expect(object.safeParse({ a: "x".repeat(2000) }).success).toBe(false);
  });
});
