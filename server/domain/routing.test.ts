import { describe, expect, it } from "vitest";
import { askOf, escalationDueAt, isAskedOf, recipientsOf, reminderDueAt, routeProblem, type OperatorContact, type Route } from "./routing.ts";

const team: OperatorContact[] = [
  { email: "ada@example.com", role: "ADMIN", groups: ["finance"], disabled: false },
  { email: "bob@example.com", role: "OPERATOR", groups: ["finance", "on-call"], disabled: false },
  { email: "cy@example.com", role: "OPERATOR", groups: [], disabled: false },
  { email: "dee@example.com", role: "VIEWER", groups: ["finance"], disabled: false },
  { email: "eve@example.com", role: "ADMIN", groups: ["on-call"], disabled: true },
];

describe("routing: who is asked", () => {
  it.each([
    ["nothing named: everyone who can decide", askOf(undefined, "OPERATOR"), ["ada@example.com", "bob@example.com", "cy@example.com"]],
    ["a role: only operators of at least that role", askOf({ role: "ADMIN" }, "OPERATOR"), ["ada@example.com"]],
    ["named operators, in any case", askOf({ operators: ["CY@example.com"] }, "OPERATOR"), ["cy@example.com"]],
    ["a group: its members who can decide, never a viewer", askOf({ group: "finance" }, "OPERATOR"), ["ada@example.com", "bob@example.com"]],
    ["a group and a name together", askOf({ group: "on-call", operators: ["cy@example.com"] }, "OPERATOR"), ["bob@example.com", "cy@example.com"]],
    ["a disabled operator is never asked", askOf({ operators: ["eve@example.com"] }, "OPERATOR"), []],
  ])("recipients: %s", (_case, ask, expected) => {
    expect(recipientsOf(ask, team)).toEqual(expected);
  });

  it("ask: the gate's role applies unless the route names one", () => {
    expect(askOf(undefined, "ADMIN")).toEqual({ role: "ADMIN", operators: [], group: null });
    expect(askOf({ role: "OPERATOR", group: "finance" }, "ADMIN")).toEqual({ role: "OPERATOR", operators: [], group: "finance" });
  });

  it("inbox: an approval is asked of an operator by name or by group, not by role alone", () => {
    const bob = { email: "bob@example.com", groups: ["on-call"] };
    expect(isAskedOf(askOf({ operators: ["bob@example.com"] }, "OPERATOR"), bob)).toBe(true);
    expect(isAskedOf(askOf({ group: "on-call" }, "OPERATOR"), bob)).toBe(true);
    expect(isAskedOf(askOf({ group: "finance" }, "OPERATOR"), bob)).toBe(false);
    expect(isAskedOf(askOf(undefined, "OPERATOR"), bob)).toBe(false);
  });
});

describe("routing: escalation and reminder times", () => {
  const createdAt = new Date("2026-11-23T12:00:00Z");
  const route: Route = {
    escalate: [
      { afterSeconds: 600, to: { group: "on-call" } },
      { afterSeconds: 1800, to: { role: "ADMIN" } },
    ],
    remindBeforeExpirySeconds: 300,
  };

  it("escalation: each step counts from the request; after the last there is none", () => {
    expect(escalationDueAt(route, createdAt, 0)?.toISOString()).toBe("2026-11-23T12:10:00.000Z");
    expect(escalationDueAt(route, createdAt, 1)?.toISOString()).toBe("2026-11-23T12:30:00.000Z");
    expect(escalationDueAt(route, createdAt, 2)).toBeNull();
    expect(escalationDueAt(null, createdAt, 0)).toBeNull();
  });

  it("reminder: before expiry, never before the request, never without an expiry", () => {
    expect(reminderDueAt(route, createdAt, new Date("2026-11-23T13:00:00Z"))?.toISOString()).toBe("2026-11-23T12:55:00.000Z");
    expect(reminderDueAt(route, createdAt, new Date("2026-11-23T12:04:00Z"))).toBeNull();
    expect(reminderDueAt(route, createdAt, null)).toBeNull();
    expect(reminderDueAt({}, createdAt, new Date("2026-11-23T13:00:00Z"))).toBeNull();
  });

  it("route: steps must come one after the other, and channels must exist", () => {
    expect(routeProblem(route)).toBeNull();
    expect(routeProblem({ escalate: [{ afterSeconds: 600, to: {} }, { afterSeconds: 600, to: {} }] })).toMatch(/^route\.escalate\[1\]\.afterSeconds: each step comes after the previous one/);
    expect(routeProblem({ channels: ["ops"], escalate: [{ afterSeconds: 60, to: {}, channels: ["pager"] }] }, new Set(["ops"]))).toBe(
      'route.escalate[0].channels: there is no notification channel named "pager" in this workspace',
    );
  });
});
