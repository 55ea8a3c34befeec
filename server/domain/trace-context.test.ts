import { describe, expect, it } from "vitest";
import { parseTraceparent, traceIdOf } from "./trace-context.ts";

const VALID = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("traceparent", () => {
  it("accepts a version-00 header, in any case, and names its trace id", () => {
    expect(parseTraceparent(VALID)).toBe(VALID);
    expect(parseTraceparent(` ${VALID.toUpperCase()} `)).toBe(VALID);
    expect(traceIdOf(VALID)).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
  });

  it("ignores what is not one: other versions, zero ids, wrong lengths, absent", () => {
    for (const header of [
      undefined,
      "",
      "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
      "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
    ]) {
      expect(parseTraceparent(header)).toBeUndefined();
    }
  });
});
