import { describe, expect, it } from "vitest";
import { channelHealth, type Attempted } from "./channel-health.ts";

const failed = (lastError = "HTTP 500"): Attempted => ({ status: "FAILED", attempts: 5, lastError });
const retrying = (lastError = "timed out"): Attempted => ({ status: "PENDING", attempts: 2, lastError });
const delivered: Attempted = { status: "DELIVERED", attempts: 1, lastError: null };
const queued: Attempted = { status: "PENDING", attempts: 0, lastError: null };

describe("channelHealth", () => {
  it.each([
    ["nothing sent yet", [], false, 0],
    ["all delivered", [delivered, delivered], false, 0],
    ["two failures", [failed(), failed(), delivered], false, 2],
    ["three failures in a row, the latest being retried", [retrying(), failed(), failed(), delivered], true, 3],
    ["a delivery since ends the run", [delivered, failed(), failed(), failed()], false, 0],
    ["a queued announcement not yet tried says nothing", [queued, failed(), failed(), failed()], true, 3],
  ])("%s", (_name, latestFirst, failing, inARow) => {
    expect(channelHealth(latestFirst)).toMatchObject({ failing, failuresInARow: inARow });
  });

  it("names the latest error", () => {
    expect(channelHealth([failed("HTTP 404 from hooks.example"), failed(), failed()]).lastError).toBe("HTTP 404 from hooks.example");
  });
});
