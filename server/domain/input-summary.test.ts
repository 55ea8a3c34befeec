import { describe, expect, it } from "vitest";
import { inputSummary } from "./input-summary";

describe("input summary", () => {
  it.each([
    [null, null],
    [{}, null],
    ["Refund order 1001 for Ada", "Refund order 1001 for Ada"],
    ["Purge drafts only\nticket TG-42 says so", "Purge drafts only …"],
    [{ ticket: "TG-42", ask: "purge drafts", dryRun: false }, "ticket: TG-42 · ask: purge drafts · dryRun: false"],
    [{ a: 1, b: 2, c: 3, d: 4, e: 5 }, "a: 1 · b: 2 · c: 3 · +2 more"],
    [{ nested: { deep: [1, 2] } }, 'nested: {"deep":[1,2]}'],
    ["x".repeat(200), `${"x".repeat(139)}…`],
  ])("%j reads %j", (input, summary) => {
    expect(inputSummary(input)).toBe(summary);
  });
});
