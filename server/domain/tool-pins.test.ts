import { describe, expect, it } from "vitest";
import { compilePolicySet, compileRule, evaluatePolicies, type PolicyRule } from "./policy.ts";
import { toolDefinitionSha256 } from "./tool-pins.ts";

const rule = (match: PolicyRule["match"], outcome: PolicyRule["outcome"] = "approve"): PolicyRule => ({
  id: `pol_${JSON.stringify(match)}`,
  name: "rule",
  version: 1,
  priority: 0,
  enabled: true,
  remembered: false,
  createdAt: new Date(0),
  expiresAt: null,
  match,
  outcome,
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
});
const call = { agent: "files", tool: "read_file", agentKeyId: null, sessionId: null, sessionMetadata: null, args: {} };
const matches = (r: PolicyRule, facts: Partial<typeof call> & { annotations?: object | null; pinned?: boolean }) =>
  evaluatePolicies(compilePolicySet([r]), { ...call, ...facts }, new Date(1)).rule !== null;

describe("tool pins and MCP hints in rules", () => {
  it("tool pins: the hash covers name, description, annotations and input schema, not key order", () => {
    const base = { name: "read_file", description: "Reads a file", annotations: { readOnlyHint: true }, inputSchema: { type: "object", properties: { path: { type: "string" } } } };
    expect(toolDefinitionSha256({ inputSchema: base.inputSchema, annotations: base.annotations, description: base.description, name: base.name })).toBe(toolDefinitionSha256(base));
    for (const changed of [
      { ...base, description: "Reads a file, and mails it to someone" },
      { ...base, annotations: { readOnlyHint: false } },
      { ...base, inputSchema: { type: "object", properties: { path: { type: "string" }, to: { type: "string" } } } },
      { ...base, name: "read_files" },
    ]) {
      expect(toolDefinitionSha256(changed)).not.toBe(toolDefinitionSha256(base));
    }
  });

  it("policy: a rule may rely on a server's claim that a tool is safe only for pinned tools", () => {
    for (const annotations of [{ readOnlyHint: true }, { destructiveHint: false }, { idempotentHint: true }, { openWorldHint: false }]) {
      expect(() => compileRule(rule({ agent: "files", annotations }))).toThrow(/only for pinned tools/);
      expect(() => compileRule(rule({ agent: "files", annotations, pinned: true }))).not.toThrow();
    }
    // The risky values are what MCP assumes anyway: a server can only make such a rule stricter by claiming them.
    expect(() => compileRule(rule({ annotations: { destructiveHint: true, readOnlyHint: false } }, "require"))).not.toThrow();
  });

  it("policy: a missing hint counts as MCP's default (destructive, not read-only, open world)", () => {
    const destructive = rule({ annotations: { destructiveHint: true } }, "require");
    expect(matches(destructive, { annotations: null })).toBe(true);
    expect(matches(destructive, { annotations: { title: "Read" } })).toBe(true);
    expect(matches(destructive, { annotations: { destructiveHint: false } })).toBe(false);
  });

  it("policy: pinned read-only tools of one server are approved; an unpinned or changed tool is not", () => {
    const pinnedReads = rule({ agent: "files", pinned: true, annotations: { readOnlyHint: true } });
    expect(matches(pinnedReads, { pinned: true, annotations: { readOnlyHint: true } })).toBe(true);
    expect(matches(pinnedReads, { pinned: false, annotations: { readOnlyHint: true } })).toBe(false);
    expect(matches(pinnedReads, { pinned: true, annotations: {} })).toBe(false);
    expect(matches(pinnedReads, { agent: "shell", pinned: true, annotations: { readOnlyHint: true } })).toBe(false);
  });
});
