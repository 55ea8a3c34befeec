import { describe, expect, it } from "vitest";
import { newId } from "./ids.ts";

describe("newId", () => {
  it("gives a prefix, ten characters of time and twelve random ones, from the id alphabet", () => {
    expect(newId("req")).toMatch(/^req_[0-9a-hjkmnp-tv-z]{22}$/);
  });

  it("never repeats within one millisecond, across many refills of its random bytes", () => {
    const ids = Array.from({ length: 10_000 }, () => newId("apr", 1_790_000_000_000));
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids.map((id) => id.slice(-12))).size).toBe(ids.length);
  });

  it("sorts by the time it was made", () => {
    const times = [1_700_000_000_000, 1_700_000_000_001, 1_790_000_000_000, 2_000_000_000_000];
    const ids = times.map((time) => newId("tsk", time));
    expect([...ids].sort()).toEqual(ids);
  });
});
