import { describe, expect, it } from "vitest";
import {
  compileCondition,
  compilePolicySet,
  evaluatePolicies,
  exactGlob,
  gateFor,
  hasRole,
  parseJsonPath,
  type CallFacts,
  type Condition,
  type PolicyRule,
  ruleForAnswer,
} from "./policy.ts";
import { errorOf } from "./testing.ts";

const NOW = new Date("2026-11-22T12:00:00Z");

function rule(overrides: Partial<PolicyRule> & { id: string }): PolicyRule {
  return {
    name: overrides.id,
    version: 1,
    priority: 10,
    enabled: true,
    remembered: false,
    createdAt: new Date("2026-01-01T00:00:00Z"),
    expiresAt: null,
    match: {},
    outcome: "require",
    message: null,
    role: "OPERATOR",
    approvers: 1,
    allow: [],
    timeoutMs: null,
    onTimeout: "reject",
    allowApproveOnTimeout: false,
    route: null,
    riskLabel: null,
    riskPaths: [],
    ...overrides,
  };
}

const call = (overrides: Partial<CallFacts> = {}): CallFacts => ({
  agent: "A2",
  tool: "send_email",
  agentKeyId: "key_1",
  sessionId: "ses_1",
  sessionMetadata: { tier: "gold", region: "eu" },
  args: { to: "a@example.com", amount: 120, tags: ["x"], nested: { "odd key": true } },
  ...overrides,
});

describe("policy: JSON paths", () => {
  it.each([
    ["$", []],
    ["$.amount", ["amount"]],
    ["$.items[0].price", ["items", 0, "price"]],
    ['$["odd key"]', ["odd key"]],
    ["$['a\\'b']", ["a'b"]],
  ])("path: %s reads as %j", (path, segments) => {
    expect(parseJsonPath(path)).toEqual(segments);
  });

  it.each(["amount", "$.items[*]", "$..deep", "$.a[?(@.x)]", "$.", "$[01x]"])("path: %s is refused with a message naming it", (path) => {
    const error = errorOf(() => parseJsonPath(path));
    expect(error.code).toBe("BAD_INPUT");
    expect(error.message).toContain(path);
  });
});

describe("policy: conditions", () => {
  const args = call().args;
  it.each<[Condition, boolean]>([
    [{ path: "$.amount", op: "eq", value: 120 }, true],
    [{ path: "$.amount", op: "neq", value: 120 }, false],
    [{ path: "$.amount", op: "gt", value: 100 }, true],
    [{ path: "$.amount", op: "gte", value: 120 }, true],
    [{ path: "$.amount", op: "lt", value: 120 }, false],
    [{ path: "$.amount", op: "lte", value: 120 }, true],
    [{ path: "$.to", op: "matches", value: "@example\\.com$" }, true],
    [{ path: "$.to", op: "matches", value: "@evil\\.com$" }, false],
    [{ path: "$.to", op: "in", value: ["a@example.com", "b@example.com"] }, true],
    [{ path: "$.tags", op: "eq", value: ["x"] }, true],
    [{ path: "$.nested", op: "eq", value: { "odd key": true } }, true],
    [{ path: '$.nested["odd key"]', op: "exists" }, true],
    [{ path: "$.cc", op: "exists" }, false],
    [{ path: "$.cc", op: "exists", value: false }, true],
    // A missing value never satisfies a comparison, not even neq.
    [{ path: "$.cc", op: "neq", value: "x" }, false],
    [{ path: "$.cc", op: "lt", value: 5 }, false],
    // Types do not mix: a string is not less than a number unless it is numeric.
    [{ path: "$.to", op: "lt", value: 5 }, false],
    [{ path: "$.amount", op: "matches", value: "12" }, false],
  ])("condition: %j is %s", (condition, expected) => {
    expect(compileCondition("args[0]", condition).test(args)).toBe(expected);
  });

  it("condition: numeric strings compare as numbers (models often send them so)", () => {
    expect(compileCondition("c", { path: "$.amount", op: "gt", value: 1000 }).test({ amount: "5000" })).toBe(true);
    expect(compileCondition("c", { path: "$.amount", op: "gt", value: 1000 }).test({ amount: "lots" })).toBe(false);
  });

  it.each<[Condition, string]>([
    [{ path: "$.a", op: "eq" }, "needs a value"],
    [{ path: "$.a", op: "in", value: "x" }, "non-empty array"],
    [{ path: "$.a", op: "gt", value: { x: 1 } }, "number or a string"],
    [{ path: "$.a", op: "matches", value: "(" }, "not a valid regular expression"],
    [{ path: "$.a", op: "matches", value: "(a)\\1" }, "not a valid regular expression"],
    [{ path: "$.a", op: "exists", value: "yes" }, "true, false"],
    [{ path: "$.a", op: "near" as never, value: 1 }, "unknown operator"],
    [{ path: "a", op: "eq", value: 1 }, "must start with $"],
  ])("condition: %j is a BAD_INPUT saying %s", (condition, words) => {
    const error = errorOf(() => compileCondition("match.args[2]", condition));
    expect(error.code).toBe("BAD_INPUT");
    expect(error.message).toContain(words);
  });

  it("condition: a regular expression that backtracks catastrophically elsewhere runs in linear time", () => {
    const condition = compileCondition("c", { path: "$.s", op: "matches", value: "^(a+)+$" });
    const started = performance.now();
    expect(condition.test({ s: "a".repeat(100_000) + "b" })).toBe(false);
    // Generous bound: a backtracking engine would take years on this input.
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe("policy: matching and order", () => {
  it.each<[string, Partial<PolicyRule>, Partial<CallFacts>, boolean]>([
    ["an empty match matches every call", {}, {}, true],
    ["tool glob", { match: { tool: "send_*" } }, {}, true],
    ["tool glob, other tool", { match: { tool: "send_*" } }, { tool: "delete_user" }, false],
    ["agent glob across separators", { match: { agent: "mcp/*" } }, { agent: "mcp/github/issues" }, true],
    ["agent glob, exact", { match: { agent: "A2" } }, { agent: "A22" }, false],
    ["agent key", { match: { agentKeyId: "key_2" } }, {}, false],
    ["session id", { match: { sessionId: "ses_1" } }, {}, true],
    ["session metadata", { match: { session: [{ path: "$.tier", op: "eq", value: "gold" }] } }, {}, true],
    ["session metadata absent", { match: { session: [{ path: "$.tier", op: "eq", value: "gold" }] } }, { sessionMetadata: null }, false],
    ["all argument conditions must hold", { match: { args: [{ path: "$.amount", op: "gt", value: 100 }, { path: "$.to", op: "matches", value: "@evil" }] } }, {}, false],
    ["disabled", { enabled: false }, {}, false],
    ["expired", { expiresAt: new Date("2026-11-22T11:59:59Z") }, {}, false],
    ["not yet expired", { expiresAt: new Date("2026-11-22T12:00:01Z") }, {}, true],
  ])("match: %s", (_name, overrides, facts, expected) => {
    const set = compilePolicySet([rule({ id: "pol_1", ...overrides })]);
    expect(evaluatePolicies(set, call(facts), NOW).rule?.id ?? null).toBe(expected ? "pol_1" : null);
  });

  it("order: priority first, then remembered before written at the same priority, then older first", () => {
    const set = compilePolicySet([
      rule({ id: "pol_late", priority: 20 }),
      rule({ id: "pol_written", priority: 10, createdAt: new Date("2026-01-01") }),
      rule({ id: "pol_remembered", priority: 10, remembered: true, createdAt: new Date("2026-06-01") }),
      rule({ id: "pol_written_newer", priority: 10, createdAt: new Date("2026-02-01") }),
    ]);
    expect(set.rules.map((compiled) => compiled.rule.id)).toEqual(["pol_remembered", "pol_written", "pol_written_newer", "pol_late"]);
  });

  it("explain: the trail says why each earlier rule did not match, and what the hit matched", () => {
    const set = compilePolicySet([
      rule({ id: "pol_big", name: "big payments", priority: 1, match: { tool: "pay_*" } }),
      rule({ id: "pol_ext", name: "external mail", priority: 2, match: { tool: "send_email", args: [{ path: "$.to", op: "matches", value: "@example\\.com$" }] } }),
    ]);
    const { rule: hit, trail } = evaluatePolicies(set, call(), NOW, { explain: true });
    expect(hit?.id).toBe("pol_ext");
    expect(trail).toEqual([
      { policyId: "pol_big", name: "big payments", matched: false, reason: 'tool "send_email" does not match "pay_*"' },
      { policyId: "pol_ext", name: "external mail", matched: true, reason: 'matches tool send_email, $.to matches "@example\\\\.com$"' },
    ]);
  });

  it("exact globs: a remembered rule for a name with glob characters matches only that name", () => {
    const set = compilePolicySet([rule({ id: "pol_1", match: { tool: exactGlob("db.*[prod]"), agent: exactGlob("a(1)") } })]);
    expect(evaluatePolicies(set, call({ tool: "db.*[prod]", agent: "a(1)" }), NOW).rule?.id).toBe("pol_1");
    expect(evaluatePolicies(set, call({ tool: "db.query", agent: "a(1)" }), NOW).rule).toBeNull();
  });
});

describe("policy: the gate an agent gets", () => {
  const defaults = { timeoutMs: 60_000, onTimeout: "reject" as const };

  it("gate: no rule means the workspace default: a person decides, every action, the default timeout", () => {
    expect(gateFor(null, defaults, {}, "t")).toEqual({
      kind: "require",
      rule: null,
      role: "OPERATOR",
      approvers: 1,
      allow: ["approve", "reject", "edit", "respond"],
      timeoutMs: 60_000,
      onTimeout: "reject",
    });
  });

  it("gate: approve and reject rules decide, whatever the agent asked", () => {
    const approve = rule({ id: "pol_a", outcome: "approve" });
    expect(gateFor(approve, defaults, { onTimeout: "approve" }, "t")).toMatchObject({ kind: "approve", rule: approve });
    expect(gateFor(rule({ id: "pol_r", outcome: "reject", message: "never" }), defaults, {}, "t")).toMatchObject({ kind: "reject", message: "never" });
  });

  it.each([
    ["a shorter timeout wins", { timeoutMs: 1_000 }, { timeoutMs: 1_000 }],
    ["a longer timeout is capped by the policy", { timeoutMs: 3_600_000 }, { timeoutMs: 60_000 }],
    ["allow narrows", { allow: ["approve" as const, "reject" as const] }, { allow: ["approve", "reject"] }],
    ["allow cannot remove reject", { allow: ["approve" as const] }, { allow: ["approve", "reject"] }],
    ["cancel instead of reject is fine: both fail closed", { onTimeout: "cancel" as const }, { onTimeout: "cancel" }],
  ])("gate: %s", (_name, ask, expected) => {
    expect(gateFor(null, defaults, ask, "t")).toMatchObject(expected);
  });

  it("gate: an agent cannot add actions the policy does not allow", () => {
    const strict = rule({ id: "pol_s", allow: ["approve", "reject"] });
    expect(gateFor(strict, defaults, { allow: ["approve", "edit", "respond"] }, "t")).toMatchObject({ allow: ["approve", "reject"] });
  });

  it("gate: onTimeout approve is refused unless the matched rule allows it", () => {
    const error = errorOf(() => gateFor(null, defaults, { timeoutMs: 100, onTimeout: "approve" }, "send_email"));
    expect(error.code).toBe("FORBIDDEN");
    expect(error.message).toContain('onTimeout "approve" is not allowed for tool "send_email"');
    const lenient = rule({ id: "pol_l", allowApproveOnTimeout: true });
    expect(gateFor(lenient, defaults, { onTimeout: "approve" }, "t")).toMatchObject({ onTimeout: "approve" });
  });

  it("gate: a quorum drops edit and respond (the approvers agree on the proposed arguments) and keeps the rule's role", () => {
    const quorum = rule({ id: "pol_q", approvers: 2, role: "ADMIN", timeoutMs: null });
    expect(gateFor(quorum, defaults, {}, "t")).toMatchObject({ approvers: 2, role: "ADMIN", allow: ["approve", "reject"], timeoutMs: null });
  });

  it.each([
    ["VIEWER", "OPERATOR", false],
    ["OPERATOR", "OPERATOR", true],
    ["OPERATOR", "ADMIN", false],
    ["ADMIN", "OPERATOR", true],
  ] as const)("role: %s may decide what needs %s: %s", (role, required, expected) => {
    expect(hasRole(role, required)).toBe(expected);
  });
});

describe("ruleForAnswer", () => {
  it.each([
    ["approve", "require"],
    ["require", "require"],
    ["reject", "reject"],
  ] as const)("a rule that would %s a call asks a question or form as %s, of one person of its role, never approving by timeout", (outcome, asked) => {
    const answered = ruleForAnswer(rule({ id: "pol_1", outcome, role: "ADMIN", approvers: 3, allow: ["approve"], allowApproveOnTimeout: true }))!;
    expect(answered).toMatchObject({ outcome: asked, role: "ADMIN", approvers: 1, allow: [], allowApproveOnTimeout: false });
  });

  it("no rule stays no rule", () => {
    expect(ruleForAnswer(null)).toBeNull();
  });
});
