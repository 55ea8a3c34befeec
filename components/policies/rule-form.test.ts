import { describe, expect, it } from "vitest";
import { compileRule } from "@/server/domain/policy";
import { zPolicyInput } from "@/server/api/routers/policy.types";
import { STARTER_RULES } from "./starter-rules";
import { describeMatch, describeOutcome } from "./describe";
import { durationFromMs, durationToMs } from "./duration";
import { parseJsonObject, parseJsonText } from "./json-text";
import { buildRuleInput, emptyCondition, emptyForm, errorsFromServer, fieldKey, formFromRule, valueFromText, valueToText, type RuleForm, type StoredRule } from "./rule-form";

const form = (overrides: Partial<RuleForm>): RuleForm => ({ ...emptyForm(), name: "a rule", ...overrides });
const condition = (path: string, op: RuleForm["args"][number]["op"], value: string) => ({ ...emptyCondition(), path, op, value });

describe("rule editor: condition values", () => {
  it.each([
    ["eq", "42", 42],
    ["eq", '"42"', "42"],
    ["eq", "ada@example.com", "ada@example.com"],
    ["eq", "true", true],
    ["in", '["a", "b"]', ["a", "b"]],
    ["eq", "", undefined],
    ["matches", '"quoted"', '"quoted"'],
    ["exists", "present", undefined],
    ["exists", "absent", false],
  ] as const)("%s %s reads as %j", (op, text, value) => {
    expect(valueFromText(op, text)).toEqual(value);
  });

  it.each([
    ["eq", 42],
    ["eq", "42"],
    ["eq", "plain text"],
    ["eq", "null"],
    ["in", ["a", 1]],
    ["eq", { nested: [1] }],
    ["matches", "^\\d+$"],
    ["exists", false],
  ] as const)("%s %j survives the trip to the field and back", (op, value) => {
    expect(valueFromText(op, valueToText(op, value))).toEqual(value);
  });
});

describe("rule editor: building the request", () => {
  it("an auto-approve rule sends the globs and no person's settings", () => {
    const built = buildRuleInput(form({ name: "read for demo", agent: "demo", tool: "read_*", outcome: "approve", approvers: "3", timeout: { amount: "5", unit: "m" } }));
    expect(built).toEqual({
      ok: true,
      input: expect.objectContaining({ name: "read for demo", match: { agent: "demo", tool: "read_*" }, outcome: "approve", approvers: 1, timeoutMs: null, allowApproveOnTimeout: false }),
    });
  });

  it("a rule that needs a person carries quorum, allowed actions (always with reject) and timeout in ms", () => {
    const built = buildRuleInput(form({ approvers: "2", role: "ADMIN", allow: ["approve"], timeout: { amount: "15", unit: "m" }, onTimeout: "cancel" }));
    expect(built.ok && built.input).toMatchObject({ outcome: "require", approvers: 2, role: "ADMIN", allow: ["approve", "reject"], timeoutMs: 900_000, onTimeout: "cancel" });
  });

  it("an empty priority places the rule last; a number is sent as one", () => {
    const last = buildRuleInput(form({}));
    const placed = buildRuleInput(form({ priority: "5" }));
    expect(last.ok && "priority" in last.input).toBe(false);
    expect(placed.ok && placed.input.priority).toBe(5);
  });

  it("a bad regular expression is refused next to its condition row, in the server's words", () => {
    const built = buildRuleInput(form({ args: [condition("$.to", "eq", "x"), condition("$.to", "matches", "(unclosed")] }));
    expect(built.ok).toBe(false);
    if (built.ok) return;
    expect(Object.keys(built.errors)).toEqual(["match.args.1"]);
    expect(built.errors["match.args.1"]).toMatch(/not a valid regular expression/);
  });

  it("a JSON path that does not start with $ or uses a wildcard is refused", () => {
    const built = buildRuleInput(form({ session: [condition("amount", "gt", "1")], args: [condition("$.items[*]", "exists", "present")] }));
    expect(built.ok ? {} : built.errors).toEqual({
      "match.session.0": expect.stringMatching(/must start with \$/),
      "match.args.0": expect.stringMatching(/wildcards and filters are not supported/),
    });
  });

  it.each([
    ["an empty name", { name: " " }, "name"],
    ["a reject without a message", { outcome: "reject" as const }, "message"],
    ["zero approvers", { approvers: "0" }, "approvers"],
    ["a negative timeout", { timeout: { amount: "-1", unit: "s" as const } }, "timeoutMs"],
    ["a timeout under a second", { timeout: { amount: "0.5", unit: "s" as const } }, "timeoutMs"],
    ["a malformed agent key id", { agentKeyId: "nope" }, "match.agentKeyId"],
    ["an ordering value without a number", { args: [condition("$.amount", "gt", "[1]")] }, "match.args.0"],
    ["an in without a list", { args: [condition("$.currency", "in", "EUR")] }, "match.args.0"],
    ["a priority that is not a whole number", { priority: "1.5" }, "priority"],
  ])("%s is refused on its field", (_label, overrides, field) => {
    const built = buildRuleInput(form(overrides));
    expect(built.ok ? [] : Object.keys(built.errors)).toEqual([field]);
  });

  it("a risk label and highlight paths (one a line) are sent; a path a rule cannot name is refused on its field", () => {
    const built = buildRuleInput(form({ riskLabel: "  deletes customer data ", riskPaths: "$.table\n\n  $.rows[0].id  " }));
    expect(built).toMatchObject({ ok: true, input: { riskLabel: "deletes customer data", riskPaths: ["$.table", "$.rows[0].id"] } });
    expect(buildRuleInput(form({}))).toMatchObject({ ok: true, input: { riskLabel: null, riskPaths: [] } });
    const refused = buildRuleInput(form({ riskPaths: "$.rows[*].id" }));
    expect(refused.ok ? {} : refused.errors).toEqual({ riskPaths: expect.stringMatching(/^riskPaths: path "\$\.rows\[\*\]\.id" cannot be read/) });
    expect(errorsFromServer('riskPaths: path "x" must start with $')).toEqual({ riskPaths: 'riskPaths: path "x" must start with $' });
  });

  it("a remembered rule placed after every written rule keeps its place when edited", () => {
    const stored: StoredRule = {
      name: "Allow lookup for billing-agent for an hour",
      description: null,
      priority: 1_000_000_000,
      enabled: true,
      match: { agent: "billing-agent", tool: "lookup" },
      outcome: "approve",
      message: null,
      role: "OPERATOR",
      approvers: 1,
      allow: [],
      timeoutMs: null,
      onTimeout: "reject",
      allowApproveOnTimeout: false,
      expiresAt: "2026-11-23T00:55:27.000Z",
    };
    const built = buildRuleInput(formFromRule(stored));
    expect(built.ok).toBe(true);
    expect(built.ok && "priority" in built.input).toBe(false);
    expect(built.ok && built.input.expiresAt).toBe("2026-11-23T00:55:27.000Z");
  });

  it("a stored rule opens in the editor and saves unchanged", () => {
    const stored: StoredRule = {
      name: "big refunds",
      description: "two admins",
      priority: 20,
      enabled: false,
      match: { tool: "refund", args: [{ path: "$.amount", op: "gt", value: 1000 }, { path: "$.note", op: "exists", value: false }] },
      outcome: "require",
      message: null,
      role: "ADMIN",
      approvers: 2,
      allow: ["approve", "reject"],
      timeoutMs: 3_600_000,
      onTimeout: "cancel",
      allowApproveOnTimeout: false,
      expiresAt: null,
    };
    const built = buildRuleInput(formFromRule(stored));
    expect(built.ok && built.input).toMatchObject({ ...stored, description: "two admins" });
  });
});

describe("rule editor: errors from the server land on their field", () => {
  it.each([
    ["invalid input: match.tool: must be a glob such as send_* or *", "match.tool"],
    ["invalid input: match.args.2.path: Too small", "match.args.2"],
    ["match.args[0] ($.to matches \"(\"): not a valid regular expression", "match.args.0"],
    ['name: a rule named "x" already exists in this workspace', "name"],
    ["message: a rule that rejects must say why", "message"],
    ["match.agent must be a glob such as \"send_*\" or \"*\", not empty", "match.agent"],
    ["invalid input: draft.match.session.1.op: Invalid option", "match.session.1"],
    ["the database is on fire", "form"],
  ])("%s goes to %s", (message, field) => {
    expect(Object.keys(errorsFromServer(message))).toEqual([field]);
  });

  it("a malformed JSON path, which the server names by its text, goes to the row that has it", () => {
    const rows = { args: [condition("$.a", "eq", "1")], session: [condition("$.tier", "eq", "gold"), condition("tier", "eq", "gold")] };
    expect(Object.keys(errorsFromServer('path "tier" must start with $ (for example $.amount)', rows))).toEqual(["match.session.1"]);
    expect(Object.keys(errorsFromServer('path "elsewhere" must start with $', rows))).toEqual(["form"]);
  });

  it("several schema errors are split between their fields", () => {
    expect(errorsFromServer("invalid input: name: Too small; approvers: Too big")).toEqual({ name: "name: Too small", approvers: "approvers: Too big" });
  });

  it.each([
    ["match.args[3].value", "match.args.3"],
    ["timeoutMs", "timeoutMs"],
    ["", "form"],
  ])("field key of %s is %s", (path, key) => {
    expect(fieldKey(path)).toBe(key);
  });
});

describe("rule editor: durations", () => {
  it.each([
    [null, { amount: "", unit: "m" }],
    [900_000, { amount: "15", unit: "m" }],
    [86_400_000, { amount: "1", unit: "d" }],
    [90_000, { amount: "90", unit: "s" }],
  ] as const)("%s ms shows as %j", (ms, text) => {
    expect(durationFromMs(ms)).toEqual(text);
  });

  it("an empty amount is no timeout, and a word is refused", () => {
    expect(durationToMs({ amount: " ", unit: "h" })).toEqual({ ok: true, ms: null });
    expect(durationToMs({ amount: "soon", unit: "h" }).ok).toBe(false);
    expect(durationToMs({ amount: "1.5", unit: "h" })).toEqual({ ok: true, ms: 5_400_000 });
  });
});

describe("rule list: rules in words", () => {
  it("names every part of the match and says when a rule matches every call", () => {
    expect(describeMatch({ agent: "demo", tool: "read_*", session: [{ path: "$.tier", op: "eq", value: "gold" }], args: [{ path: "$.to", op: "matches", value: "@example\\.com$" }] })).toEqual([
      "agent demo",
      "tool read_*",
      'session metadata $.tier = "gold"',
      "argument $.to matches /@example\\.com$/",
    ]);
    expect(describeMatch({})).toEqual(["every call"]);
  });

  it("says who decides, with which actions, and what a timeout does", () => {
    const base = { message: null, role: "OPERATOR" as const, approvers: 1, allow: [], timeoutMs: null, onTimeout: "reject" as const, allowApproveOnTimeout: false };
    expect(describeOutcome({ ...base, outcome: "approve" })).toBe("Approved automatically");
    expect(describeOutcome({ ...base, outcome: "reject", message: "no mail" })).toBe("Rejected automatically: “no mail”");
    expect(describeOutcome({ ...base, outcome: "require", role: "ADMIN", approvers: 2, allow: ["approve", "reject"], timeoutMs: 3_600_000, onTimeout: "cancel" })).toBe(
      "A person decides: 2 admins; approve, reject; after 1h 00m it is canceled",
    );
  });
});

describe("dry run: JSON typed into a textarea", () => {
  it("parses JSON, and says where invalid JSON breaks", () => {
    expect(parseJsonText('{"path": "/etc"}', "required")).toEqual({ ok: true, value: { path: "/etc" } });
    const broken = parseJsonText("{path: 1}", "required");
    expect(broken.ok ? "" : broken.message).toMatch(/^not valid JSON: /);
    expect(parseJsonText("  ", "required").ok).toBe(false);
    expect(parseJsonText("", { value: {} })).toEqual({ ok: true, value: {} });
  });

  it("session metadata must be an object, or left empty", () => {
    expect(parseJsonObject("")).toEqual({ ok: true, value: undefined });
    expect(parseJsonObject('{"tier":"gold"}')).toEqual({ ok: true, value: { tier: "gold" } });
    expect(parseJsonObject("[1]").ok).toBe(false);
    expect(parseJsonObject("null").ok).toBe(false);
  });
});

describe("rule form: MCP conditions", () => {
  const stored = {
    name: "pinned reads",
    description: null,
    priority: 0,
    enabled: true,
    match: { agent: "files", pinned: true, annotations: { readOnlyHint: true } },
    outcome: "approve" as const,
    message: null,
    role: "OPERATOR" as const,
    approvers: 1,
    allow: [],
    timeoutMs: null,
    onTimeout: "reject" as const,
    allowApproveOnTimeout: false,
    route: null,
    expiresAt: null,
    riskLabel: null,
    riskPaths: [],
  };

  it("rule form: a rule's pinned and hint conditions survive an edit, so saving never widens it", () => {
    const built = buildRuleInput({ ...formFromRule(stored as never), name: "pinned reads, renamed" });
    expect(built.ok && built.input.match).toEqual({ agent: "files", pinned: true, annotations: { readOnlyHint: true } });
  });

  it("rule form: a hint that claims safety without pinned is refused next to the field, as the server would", () => {
    const built = buildRuleInput({ ...formFromRule(stored as never), pinned: false });
    expect(built.ok).toBe(false);
    expect(!built.ok && built.errors["match.annotations"]).toMatch(/only for pinned tools/);
  });

  it("starter rules: each is a rule the server accepts", () => {
    for (const rule of STARTER_RULES) {
      expect(zPolicyInput.safeParse(rule).success).toBe(true);
      expect(() => compileRule({ ...rule, match: rule.match } as never)).not.toThrow();
    }
  });
});
