import { applyPatch } from "fast-json-patch/index.mjs";
import { describe, expect, it } from "vitest";
import { diffParsedStates, diffStates, stateSizeBytes, summarizeDiff, topLevelChanges } from "./diff.ts";
import { annotateOwners, type OwnershipRules } from "./ownership.ts";

function applied(from: unknown, to: unknown): unknown {
  return applyPatch(structuredClone(from), diffStates(from, to), true, false).newDocument;
}

describe("diffStates", () => {
  const pairs: [string, unknown, unknown][] = [
    ["identical states", { a: 1, b: [1, 2] }, { a: 1, b: [1, 2] }],
    ["a key added", { a: 1 }, { a: 1, b: { c: true } }],
    ["a key removed", { a: 1, b: 2 }, { a: 1 }],
    ["a nested value changed", { a: { b: { c: 1 } } }, { a: { b: { c: 2 } } }],
    ["nested arrays grown, shrunk and edited", { m: [[1, 2], [3], [4, 5, 6]] }, { m: [[1, 9], [3, 3, 3], [4]] }],
    ["an array of objects with a middle element removed", { l: [{ id: 1 }, { id: 2 }, { id: 3 }] }, { l: [{ id: 1 }, { id: 3 }] }],
    ["a string becomes an object", { a: "x" }, { a: { x: 1 } }],
    ["an object becomes an array", { a: { 0: "x" } }, { a: ["x"] }],
    ["an array becomes null", { a: [1] }, { a: null }],
    ["a number becomes a string", { a: 1 }, { a: "1" }],
    ["no state becomes a state", null, { a: 1 }],
    ["a state becomes no state", { a: 1 }, null],
    ["a root object becomes a root array", { a: 1 }, [1]],
    ["keys that need escaping", { "a/b": 1, "c~d": { "e/f": 2 } }, { "a/b": 2, "c~d": {} }],
    ["unicode values", { name: "Zoë" }, { name: "Zoë 🚀" }],
  ];
  it.each(pairs)("diff: applying the patch of %s to the old state yields the new one", (_name, from, to) => {
    expect(applied(from, to)).toEqual(to);
  });

  it.each(pairs)("diff: for states read back from JSON, diffParsedStates gives the same patch as diffStates (%s)", (_name, from, to) => {
    const parse = (value: unknown) => (value === null ? null : (JSON.parse(JSON.stringify(value)) as unknown));
    expect(diffParsedStates(parse(from), parse(to))).toEqual(diffStates(from, to));
  });

  it("diff: identical states give an empty patch, whatever the key order", () => {
    expect(diffStates({ a: 1, b: { c: [1, { d: 2 }] } }, { b: { c: [1, { d: 2 }] }, a: 1 })).toEqual([]);
    expect(diffStates(null, null)).toEqual([]);
  });

  it("diff: a key removal is a remove op at its path", () => {
    expect(diffStates({ a: 1, b: 2 }, { a: 1 })).toEqual([{ op: "remove", path: "/b" }]);
  });

  it("diff: a nested change is a replace at the deepest path, not of the whole key", () => {
    expect(diffStates({ a: { list: [1, 2, 3] } }, { a: { list: [1, 5, 3] } })).toEqual([{ op: "replace", path: "/a/list/1", value: 5 }]);
  });

  it("diff: a type change replaces the value at its path", () => {
    expect(diffStates({ a: [1] }, { a: { 0: 1 } })).toEqual([{ op: "replace", path: "/a", value: { 0: 1 } }]);
  });

  it("diff: a root type change is one replace of the root", () => {
    expect(diffStates(null, { a: 1 })).toEqual([{ op: "replace", path: "", value: { a: 1 } }]);
    expect(diffStates({ a: 1, b: 2 }, [1])).toEqual([{ op: "replace", path: "", value: [1] }]);
  });

  it("diff: undefined-valued keys are absent, as in the saved JSON", () => {
    expect(diffStates({ a: 1, b: undefined }, { a: 1 })).toEqual([]);
  });

  it("diff: the inputs are not mutated", () => {
    const from = { a: [1, 2] };
    const to = { a: [1] };
    diffStates(from, to);
    expect(from).toEqual({ a: [1, 2] });
    expect(to).toEqual({ a: [1] });
  });
});

describe("summarizeDiff", () => {
  const rules: OwnershipRules = {
    rules: [
      { match: { key: "route" }, owner: "ORCHESTRATOR" },
      { match: { key: "cart" }, owner: "SHARED", protocol: "append-only" },
      { match: { prefix: "mem" }, owner: "MEMORY" },
    ],
  };

  it("diff: one row per top-level key, with change kind and owner, sorted by key", () => {
    const from = { route: { to: "A1", hops: [1] }, cart: [1], memory: { x: 1 }, _tmp: 1 };
    const to = { route: { to: "A2", hops: [1, 2] }, cart: [1], notes: "n", _tmp: 1 };
    const summary = summarizeDiff(diffStates(from, to), annotateOwners(rules, from, to));
    expect(summary).toEqual([
      { key: "memory", change: "removed", owner: "MEMORY" },
      { key: "notes", change: "added", owner: "SHARED", protocol: "last-write-wins" },
      { key: "route", change: "changed", owner: "ORCHESTRATOR" },
    ]);
  });

  it("diff: escaped keys are reported by their real names", () => {
    const from = { "a/b": 1, "c~d": 1 };
    const to = { "a/b": 2 };
    expect(summarizeDiff(diffStates(from, to), annotateOwners(rules, from, to)).map((row) => [row.key, row.change])).toEqual([
      ["a/b", "changed"],
      ["c~d", "removed"],
    ]);
  });

  it("diff: from no state, every key is added", () => {
    const to = { cart: [1], route: "x" };
    expect(summarizeDiff(diffStates(null, to), annotateOwners(rules, null, to))).toEqual([
      { key: "cart", change: "added", owner: "SHARED", protocol: "append-only" },
      { key: "route", change: "added", owner: "ORCHESTRATOR" },
    ]);
  });

  it("diff: to no state, every key is removed", () => {
    const from = { cart: [1], route: "x" };
    expect(summarizeDiff(diffStates(from, null), annotateOwners(rules, from, null)).map((row) => row.change)).toEqual(["removed", "removed"]);
  });

  it("diff: a key the annotations do not cover has owner null", () => {
    expect(summarizeDiff([{ op: "add", path: "/x", value: 1 }], {})).toEqual([{ key: "x", change: "added", owner: null }]);
  });

  it("diff: a key removed and added again in one patch is changed", () => {
    const ops = [
      { op: "remove", path: "/x" },
      { op: "add", path: "/x", value: 2 },
    ] as const;
    expect(summarizeDiff([...ops], {})).toEqual([{ key: "x", change: "changed", owner: null }]);
  });
});

describe("topLevelChanges", () => {
  it("diff: added, removed and deeply changed keys, sorted, no state as empty", () => {
    expect(topLevelChanges({ a: 1, b: [1, { c: 1 }], d: 0 }, { a: 1, b: [1, { c: 2 }], e: null })).toEqual([
      { key: "b", change: "changed" },
      { key: "d", change: "removed" },
      { key: "e", change: "added" },
    ]);
    expect(topLevelChanges(null, undefined)).toEqual([]);
  });

  it("diff: a key whose value only reorders its object keys is unchanged", () => {
    expect(topLevelChanges({ a: { x: 1, y: [{ p: 1, q: 2 }] } }, { a: { y: [{ q: 2, p: 1 }], x: 1 } })).toEqual([]);
  });
});

describe("stateSizeBytes", () => {
  it("diff: size is the UTF-8 byte length of the JSON", () => {
    expect(stateSizeBytes({ a: 1 })).toBe(7);
    expect(stateSizeBytes({ n: "é" })).toBe('{"n":"é"}'.length + 1);
    expect(stateSizeBytes({ e: "🚀" })).toBe(12);
    expect(stateSizeBytes(null)).toBe(4);
    expect(stateSizeBytes(undefined)).toBe(0);
  });
});
