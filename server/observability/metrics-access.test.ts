import { describe, expect, it } from "vitest";
import { metricsAccess } from "./metrics-access.ts";

describe("metrics access", () => {
  it("metrics access: in production without a token /metrics is open and the server says so; refuse closes it; a token always wins", () => {
    expect(metricsAccess({ NODE_ENV: "production", TOLLGATE_METRICS_WITHOUT_TOKEN: "open" })).toEqual({
      kind: "open",
      warning: expect.stringMatching(/^\/metrics is open .*TOLLGATE_METRICS_TOKEN.*TOLLGATE_METRICS_WITHOUT_TOKEN=refuse/),
    });
    expect(metricsAccess({ NODE_ENV: "development", TOLLGATE_METRICS_WITHOUT_TOKEN: "open" })).toEqual({ kind: "open" });
    expect(metricsAccess({ NODE_ENV: "production", TOLLGATE_METRICS_WITHOUT_TOKEN: "refuse" })).toEqual({ kind: "refused" });
    expect(metricsAccess({ NODE_ENV: "production", TOLLGATE_METRICS_WITHOUT_TOKEN: "refuse", TOLLGATE_METRICS_TOKEN: "t".repeat(16) })).toEqual({ kind: "token", token: "t".repeat(16) });
  });
});
