// Differences between two saved versions of a thread's state: the exact RFC 6902
// patch, the per-key summary the console lists, and a state's stored size.

// The ESM entry on purpose: see fast-json-patch.d.ts beside this file.
import type { Operation } from "fast-json-patch/index.mjs";
import { dequal } from "dequal";
import { jsonSize } from "../json.ts";
import { jsonPatch } from "./patch.ts";
import type { KeyOwnership, Owner } from "./ownership.ts";

export type { Operation };
export type StateObject = Record<string, unknown>;
export type KeyChangeKind = "added" | "removed" | "changed";
export type KeyChange = { key: string; change: KeyChangeKind };
export type KeyChangeSummary = KeyChange & { owner: Owner | null; protocol?: string };

/**
 * RFC 6902 patch that turns `from` into `to`. Both are compared as JSON: a key
 * holding undefined is an absent key. Arrays are aligned first (patch.ts), so a
 * list with one element removed is one remove. The root is replaced whole when
 * the two are not both objects or both arrays (null -> state, state -> array ...).
 */
export function diffStates(from: unknown, to: unknown): Operation[] {
  return diffJson(asJson(from), asJson(to));
}

/**
 * diffStates for values that came straight out of JSON.parse (states read back
 * from the database): they are JSON already, so the normalising round trip,
 * which costs about as much as the comparison on megabyte states, is skipped.
 */
export function diffParsedStates(from: unknown, to: unknown): Operation[] {
  return diffJson(from === undefined ? null : from, to === undefined ? null : to);
}

function diffJson(a: unknown, b: unknown): Operation[] {
  if (isContainer(a) && isContainer(b) && Array.isArray(a) === Array.isArray(b)) return jsonPatch(a, b);
  return dequal(a, b) ? [] : [{ op: "replace", path: "", value: b }];
}

/**
 * One row per top-level key the patch touches, sorted by key. `owners` should
 * cover both versions (annotateOwners(rules, from, to)) so removed keys keep
 * their owner; a key it does not cover gets owner null.
 */
export function summarizeDiff(ops: readonly Operation[], owners: Readonly<Record<string, KeyOwnership>>): KeyChangeSummary[] {
  const changes = new Map<string, KeyChangeKind>();
  for (const op of ops) {
    if (op.path === "") {
      for (const change of rootReplacement(op, owners)) changes.set(change.key, change.change);
      continue;
    }
    const [first = "", ...rest] = op.path.slice(1).split("/");
    const key = unescapeSegment(first);
    const whole = rest.length === 0;
    const change: KeyChangeKind = whole && op.op === "add" ? "added" : whole && op.op === "remove" ? "removed" : "changed";
    // A key both removed and re-added within one patch is, in sum, changed.
    const before = changes.get(key);
    changes.set(key, before === undefined || before === change ? change : "changed");
  }
  return [...changes.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, change]) => {
      const ownership = Object.hasOwn(owners, key) ? owners[key] : undefined;
      if (!ownership) return { key, change, owner: null };
      return ownership.protocol === undefined
        ? { key, change, owner: ownership.owner }
        : { key, change, owner: ownership.owner, protocol: ownership.protocol };
    });
}

/** What a state costs to store: UTF-8 bytes of its JSON (0 for no state). */
export function stateSizeBytes(state: unknown): number {
  return jsonSize(state);
}

/**
 * Top-level keys added, removed or changed (deep, JSON equality), sorted by key.
 * No state (null or undefined) counts as the empty object.
 */
export function topLevelChanges(from: StateObject | null | undefined, to: StateObject | null | undefined): KeyChange[] {
  const before = from ?? {};
  const after = to ?? {};
  const keys = new Set([...presentKeys(before), ...presentKeys(after)]);
  const changes: KeyChange[] = [];
  for (const key of [...keys].sort()) {
    const had = isPresent(before, key);
    const has = isPresent(after, key);
    if (had && !has) changes.push({ key, change: "removed" });
    else if (!had && has) changes.push({ key, change: "added" });
    else if (!dequal(before[key], after[key])) changes.push({ key, change: "changed" });
  }
  return changes;
}

function rootReplacement(op: Operation, owners: Readonly<Record<string, KeyOwnership>>): KeyChange[] {
  // diffStates replaces the root only when one side is not an object, so every
  // key of the new object was added and every other key the annotations know of
  // (they were made from both versions) was removed.
  const value: unknown = op.op === "replace" || op.op === "add" ? op.value : undefined;
  const after: StateObject = isContainer(value) && !Array.isArray(value) ? value : {};
  const added = presentKeys(after).map((key): KeyChange => ({ key, change: "added" }));
  const removed = Object.keys(owners)
    .filter((key) => !isPresent(after, key))
    .map((key): KeyChange => ({ key, change: "removed" }));
  return [...added, ...removed];
}

function asJson(value: unknown): unknown {
  const text = JSON.stringify(value);
  return text === undefined ? null : (JSON.parse(text) as unknown);
}

function isContainer(value: unknown): value is StateObject | unknown[] {
  return typeof value === "object" && value !== null;
}

function presentKeys(state: StateObject): string[] {
  return Object.keys(state).filter((key) => state[key] !== undefined);
}

function isPresent(state: StateObject, key: string): boolean {
  return Object.hasOwn(state, key) && state[key] !== undefined;
}

function unescapeSegment(segment: string): string {
  return segment.replaceAll("~1", "/").replaceAll("~0", "~");
}
