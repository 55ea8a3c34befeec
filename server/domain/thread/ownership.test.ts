import { describe, expect, it } from "vitest";
import { errorOf } from "../testing.ts";
import {
  UNDECLARED_SHARED_PROTOCOL,
  annotateOwners,
  checkStateWrite,
  ownerOf,
  ownershipOf,
  parseOwnershipRules,
  stripAgentKeys,
  type Owner,
  type OwnershipRules,
  type WriterKind,
} from "./ownership.ts";


// One key per owner, declared the way a thread would declare them.
const RULES: OwnershipRules = {
  rules: [
    { match: { key: "scratch" }, owner: "AGENT" },
    { match: { key: "facts" }, owner: "MEMORY" },
    { match: { key: "route" }, owner: "ORCHESTRATOR" },
    { match: { key: "cart" }, owner: "SHARED", protocol: "append-only" },
  ],
};
const KEY_OF: Record<Owner, string> = { AGENT: "scratch", MEMORY: "facts", ORCHESTRATOR: "route", SHARED: "cart" };

describe("ownershipOf", () => {
  const rules: OwnershipRules = {
    rules: [
      { match: { prefix: "trace" }, owner: "ORCHESTRATOR" },
      { match: { prefix: "trace.mem" }, owner: "MEMORY" },
      { match: { key: "trace.memo" }, owner: "SHARED", protocol: "merge" },
      { match: { key: "_routing" }, owner: "ORCHESTRATOR" },
      { match: { prefix: "_mem" }, owner: "MEMORY" },
    ],
  };
  const cases: [string, string, OwnershipRules | null, Owner, string | undefined][] = [
    ["an exact key beats every prefix", "trace.memo", rules, "SHARED", "merge"],
    ["the longer prefix beats the shorter", "trace.memory", rules, "MEMORY", undefined],
    ["a prefix matches keys that start with it", "trace.step", rules, "ORCHESTRATOR", undefined],
    ["an explicit key beats the underscore convention", "_routing", rules, "ORCHESTRATOR", undefined],
    ["an explicit prefix beats the underscore convention", "_memo", rules, "MEMORY", undefined],
    ["an unmatched underscore key is AGENT", "_draft", rules, "AGENT", undefined],
    ["an unmatched key falls back to SHARED last-write-wins", "notes", rules, "SHARED", UNDECLARED_SHARED_PROTOCOL],
    ["with no rules at all, underscore keys are AGENT", "_tmp", null, "AGENT", undefined],
    ["with no rules at all, other keys are SHARED", "notes", null, "SHARED", UNDECLARED_SHARED_PROTOCOL],
  ];
  it.each(cases)("ownership: %s", (_name, key, declared, owner, protocol) => {
    expect(ownershipOf(declared, key)).toEqual(protocol === undefined ? { owner } : { owner, protocol });
    expect(ownerOf(declared, key)).toBe(owner);
  });

  it("ownership: the declared default owns unmatched keys, but not underscore keys", () => {
    const withDefault: OwnershipRules = { rules: [], default: "ORCHESTRATOR" };
    expect(ownershipOf(withDefault, "notes")).toEqual({ owner: "ORCHESTRATOR" });
    expect(ownershipOf(withDefault, "_tmp")).toEqual({ owner: "AGENT" });
  });

  it("ownership: a prefix is a plain string prefix, not a dotted path", () => {
    const rules: OwnershipRules = { rules: [{ match: { prefix: "mem" }, owner: "MEMORY" }] };
    expect(ownerOf(rules, "memo")).toBe("MEMORY");
    expect(ownerOf(rules, "Mem")).toBe("SHARED");
  });
});

describe("checkStateWrite", () => {
  // owner x writer -> allowed? Adding and changing a key follow the same rule.
  const table: [Owner, WriterKind, boolean][] = [
    ["AGENT", "agent", false],
    ["AGENT", "orchestrator", false],
    ["AGENT", "memory", false],
    ["MEMORY", "agent", false],
    ["MEMORY", "orchestrator", false],
    ["MEMORY", "memory", true],
    ["ORCHESTRATOR", "agent", false],
    ["ORCHESTRATOR", "orchestrator", true],
    ["ORCHESTRATOR", "memory", false],
    ["SHARED", "agent", true],
    ["SHARED", "orchestrator", true],
    ["SHARED", "memory", true],
  ];
  const writes = [
    { change: "added", previous: {}, next: (key: string) => ({ [key]: 1 }) },
    { change: "changed", previous: (key: string) => ({ [key]: { list: [1, 2] } }), next: (key: string) => ({ [key]: { list: [1, 3] } }) },
  ] as const;

  for (const [owner, writer, allowed] of table) {
    for (const write of writes) {
      const key = KEY_OF[owner];
      const previous = typeof write.previous === "function" ? write.previous(key) : write.previous;
      const next = write.next(key);
      it(`ownership: ${writer} ${write.change === "added" ? "adding" : "changing"} a ${owner} key is ${allowed ? "allowed" : "refused"}`, () => {
        if (allowed) {
          expect(checkStateWrite(RULES, previous, next, { kind: writer })).toEqual([{ key, change: write.change }]);
        } else {
          const error = errorOf(() => checkStateWrite(RULES, previous, next, { kind: writer }));
          expect(error.code).toBe("FORBIDDEN");
          expect(error.message).toMatch(new RegExp(`^key "${key}" is owned by ${owner}; `));
          expect(error.details).toEqual({ key, owner, writer, change: write.change });
        }
      });
    }
  }

  // Removing follows the owner x writer table, except that AGENT keys may always
  // be removed: dropping them is what the end of a request does.
  const removals: [Owner, WriterKind, boolean][] = table.map(([owner, writer, allowed]) => [owner, writer, owner === "AGENT" ? true : allowed]);
  it.each(removals)("ownership: removing a %s key as %s: allowed=%s", (owner, writer, allowed) => {
    const key = KEY_OF[owner];
    const attempt = () => checkStateWrite(RULES, { [key]: "x" }, {}, { kind: writer });
    if (allowed) expect(attempt()).toEqual([{ key, change: "removed" }]);
    else expect(errorOf(attempt).code).toBe("FORBIDDEN");
  });

  it("ownership: an agent writing an ORCHESTRATOR key is refused with a message naming key, owner and writer", () => {
    const error = errorOf(() => checkStateWrite(RULES, { route: "a" }, { route: "b" }, { kind: "agent" }));
    expect(error.message).toBe('key "route" is owned by ORCHESTRATOR; an agent may not write it; only orchestrators write it, agents read it');
  });

  it("ownership: saving an AGENT key says it is request-scoped and points to stripAgentKeys", () => {
    const error = errorOf(() => checkStateWrite(RULES, {}, { scratch: 1 }, { kind: "agent" }));
    expect(error.message).toBe(
      'key "scratch" is owned by AGENT; an agent may not write it into saved state: AGENT keys are request-scoped and are dropped at request end; save stripAgentKeys(state) instead',
    );
  });

  it("ownership: an agent writing a MEMORY key is told to use the memory API", () => {
    const error = errorOf(() => checkStateWrite(RULES, {}, { facts: ["x"] }, { kind: "agent" }));
    expect(error.message).toBe('key "facts" is owned by MEMORY; an agent may not write it; change it through the memory API');
  });

  it("ownership: unchanged keys are not writes, whoever owns them", () => {
    const state = { route: { to: "A2" }, facts: [1], cart: [] };
    expect(checkStateWrite(RULES, state, structuredClone(state), { kind: "agent" })).toEqual([]);
  });

  it("ownership: equality is deep and ignores object key order", () => {
    const previous = { route: { a: 1, b: [1, { c: 2 }] } };
    const next = { route: { b: [1, { c: 2 }], a: 1 } };
    expect(checkStateWrite(RULES, previous, next, { kind: "agent" })).toEqual([]);
  });

  it("ownership: a key set to undefined counts as absent, as it would once saved as JSON", () => {
    expect(checkStateWrite(RULES, { route: undefined }, {}, { kind: "agent" })).toEqual([]);
  });

  it("ownership: the first illegal key in key order is reported, after legal ones", () => {
    const error = errorOf(() => checkStateWrite(RULES, null, { cart: [1], route: "x", facts: [2] }, { kind: "agent" }));
    expect(error.details?.key).toBe("facts");
  });

  it("ownership: an agent's save with only SHARED changes returns every change", () => {
    const changes = checkStateWrite(RULES, { cart: [1], notes: "a" }, { cart: [1, 2], extra: true }, { kind: "agent" });
    expect(changes).toEqual([
      { key: "cart", change: "changed" },
      { key: "extra", change: "added" },
      { key: "notes", change: "removed" },
    ]);
  });

  it("ownership: the end of a request saves stripAgentKeys of the working state without refusal", () => {
    const saved = { cart: [1], route: "A2" };
    const working = { ...saved, cart: [1, 2], scratch: "thinking", _draft: "..." };
    const next = stripAgentKeys(RULES, working);
    expect(next).toEqual({ cart: [1, 2], route: "A2" });
    expect(checkStateWrite(RULES, saved, next, { kind: "agent" })).toEqual([{ key: "cart", change: "changed" }]);
  });
});

describe("stripAgentKeys", () => {
  it("ownership: AGENT keys (declared and underscore) are dropped, others kept, input untouched", () => {
    const state = { scratch: 1, _tmp: 2, facts: 3, route: 4, cart: 5, other: 6 };
    expect(stripAgentKeys(RULES, state)).toEqual({ facts: 3, route: 4, cart: 5, other: 6 });
    expect(state).toEqual({ scratch: 1, _tmp: 2, facts: 3, route: 4, cart: 5, other: 6 });
  });

  it("ownership: a __proto__ key from JSON survives as a plain own key", () => {
    const state = JSON.parse('{"__proto__": {"x": 1}, "_tmp": 1}') as Record<string, unknown>;
    const rules: OwnershipRules = { rules: [{ match: { key: "__proto__" }, owner: "SHARED", protocol: "opaque" }] };
    const stripped = stripAgentKeys(rules, state);
    expect(Object.keys(stripped)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(stripped)).toBe(Object.prototype);
  });
});

describe("annotateOwners", () => {
  it("ownership: every key of every given version is annotated with owner and protocol", () => {
    const from = { route: 1, cart: [] };
    const to = { cart: [1], _tmp: 1, notes: "" };
    expect(annotateOwners(RULES, from, to)).toEqual({
      _tmp: { owner: "AGENT" },
      cart: { owner: "SHARED", protocol: "append-only" },
      notes: { owner: "SHARED", protocol: UNDECLARED_SHARED_PROTOCOL },
      route: { owner: "ORCHESTRATOR" },
    });
  });

  it("ownership: no state annotates nothing", () => {
    expect(annotateOwners(RULES, null, undefined)).toEqual({});
  });
});

describe("parseOwnershipRules", () => {
  it("ownership: valid rules are accepted", () => {
    const value = {
      rules: [
        { match: { key: "route" }, owner: "ORCHESTRATOR" },
        { match: { prefix: "mem." }, owner: "MEMORY" },
        { match: { key: "cart" }, owner: "SHARED", protocol: "append-only" },
      ],
      default: "SHARED",
    };
    expect(parseOwnershipRules(value)).toEqual(value);
  });

  const bad: [string, unknown, string, RegExp][] = [
    ["not an object", [], "ownership", /must be an object with a "rules" array/],
    ["rules missing", {}, "ownership", /must be an object with a "rules" array/],
    ["an unknown default", { rules: [], default: "ANYONE" }, "ownership.default", /must be one of AGENT, MEMORY, ORCHESTRATOR, SHARED/],
    ["a rule that is not an object", { rules: ["route"] }, "ownership.rules[0]", /must be an object/],
    ["a match with neither key nor prefix", { rules: [{ match: {}, owner: "MEMORY" }] }, "ownership.rules[0].match", /exactly one of "key" or "prefix"/],
    ["a match with both key and prefix", { rules: [{ match: { key: "a", prefix: "b" }, owner: "MEMORY" }] }, "ownership.rules[0].match", /exactly one/],
    ["an empty prefix", { rules: [{ match: { prefix: "" }, owner: "MEMORY" }] }, "ownership.rules[0].match.prefix", /use "default"/],
    ["an unknown owner", { rules: [{ match: { key: "a" }, owner: "USER" }] }, "ownership.rules[0].owner", /must be one of/],
    ["a SHARED rule without protocol", { rules: [{ match: { key: "cart" }, owner: "SHARED" }] }, "ownership.rules[0].protocol", /makes key "cart" SHARED without a protocol/],
    ["a SHARED rule with a blank protocol", { rules: [{ match: { prefix: "c" }, owner: "SHARED", protocol: " " }] }, "ownership.rules[0].protocol", /prefix "c" SHARED without a protocol/],
    ["a protocol on a non-SHARED rule", { rules: [{ match: { key: "a" }, owner: "MEMORY", protocol: "x" }] }, "ownership.rules[0].protocol", /only SHARED keys take a protocol/],
    [
      "two rules for one key",
      { rules: [{ match: { key: "a" }, owner: "MEMORY" }, { match: { key: "a" }, owner: "AGENT" }] },
      "ownership.rules[1]",
      /ownership.rules\[1\] and ownership.rules\[0\] both claim key "a"/,
    ],
  ];
  it.each(bad)("ownership: %s is BAD_INPUT naming the field", (_name, value, field, message) => {
    const error = errorOf(() => parseOwnershipRules(value));
    expect(error.code).toBe("BAD_INPUT");
    expect(error.details).toEqual({ field });
    expect(error.message).toMatch(message);
  });

  it("ownership: a key rule and a prefix rule with the same text do not clash", () => {
    const value = { rules: [{ match: { key: "a" }, owner: "MEMORY" }, { match: { prefix: "a" }, owner: "ORCHESTRATOR" }] };
    expect(parseOwnershipRules(value)).toEqual(value);
  });
});
