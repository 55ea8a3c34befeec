import { describe, expect, it } from "vitest";
import { isTrustedFor, mayActOn } from "./authority.ts";

describe("trust globs", () => {
  it.each<[string[], string, boolean]>([
    [[], "A2", false],
    [["A2"], "A2", true],
    [["A2"], "A20", false],
    [["A*"], "A2", true],
    [["A*"], "O1", false],
    [["A*"], "a2", false],
    [["*"], "anything", true],
    [["billing-*", "support-?"], "support-7", true],
    [["billing-*", "support-?"], "support-12", false],
    [["team/*"], "team/refunds", true],
    [["*"], "team/refunds", true],
    [["{A,O}1"], "O1", true],
    [["A[0-9]"], "A2", true],
    [["A[0-9]"], "AB", false],
    [[".*"], ".hidden", true],
  ])("trust: %j trusts agent %s: %s", (globs, agent, expected) => {
    expect(isTrustedFor(globs, agent)).toBe(expected);
  });
});

describe("authority", () => {
  it.each<[string, boolean, string[], string, boolean]>([
    ["its own or below its own work", true, [], "O1", true],
    ["its own work, whatever it trusts", true, ["B*"], "A2", true],
    ["another key's work", false, [], "A2", false],
    ["another key's work of an agent it is trusted for", false, ["A*"], "A2", true],
    ["another key's work of an agent it is not trusted for", false, ["A*"], "O1", false],
  ])("a key acting on %s: %s", (_case, keyAtOrAbove, trustedAgents, agent, expected) => {
    expect(mayActOn({ trustedAgents }, { keyAtOrAbove, agent })).toBe(expected);
  });

  it("authority: a changed trust list is matched as it is now, not as first compiled", () => {
    expect(mayActOn({ trustedAgents: ["A*"] }, { keyAtOrAbove: false, agent: "A2" })).toBe(true);
    expect(mayActOn({ trustedAgents: ["O*"] }, { keyAtOrAbove: false, agent: "A2" })).toBe(false);
  });
});
