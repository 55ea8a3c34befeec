// A compact RFC 6902 patch between two JSON values. Arrays are aligned (Myers'
// diff over each element's JSON) before they are compared, so removing or
// inserting one element in a long list is one operation instead of a rewrite of
// every element after it; elements that changed in place are diffed inside.
import type { Operation } from "fast-json-patch/index.mjs";

/**
 * Beyond this many inserted plus removed elements in one array, aligning costs
 * more than it saves: the array is compared index by index instead.
 */
const MAX_EDIT_DISTANCE = 1000;

/**
 * Operations that, applied in order, turn `from` into `to`. Both must be JSON
 * values (as JSON.parse returns them) of the same container type; values in
 * the operations are shared with `to`, not copied.
 */
export function jsonPatch(from: object, to: object): Operation[] {
  const ops: Operation[] = [];
  compareValues(from, to, "", ops);
  return ops;
}

function compareValues(a: unknown, b: unknown, path: string, ops: Operation[]): void {
  if (a === b) return;
  const aArray = Array.isArray(a);
  const bArray = Array.isArray(b);
  if (aArray && bArray) return compareArrays(a as unknown[], b as unknown[], path, ops);
  if (isObject(a) && isObject(b) && !aArray && !bArray) return compareObjects(a, b, path, ops);
  ops.push({ op: "replace", path, value: b });
}

function compareObjects(a: Record<string, unknown>, b: Record<string, unknown>, path: string, ops: Operation[]): void {
  for (const key of Object.keys(a)) {
    if (!Object.hasOwn(b, key)) ops.push({ op: "remove", path: `${path}/${escape(key)}` });
  }
  for (const key of Object.keys(a)) {
    if (Object.hasOwn(b, key)) compareValues(a[key], b[key], `${path}/${escape(key)}`, ops);
  }
  for (const key of Object.keys(b)) {
    if (!Object.hasOwn(a, key)) ops.push({ op: "add", path: `${path}/${escape(key)}`, value: b[key] });
  }
}

function compareArrays(a: unknown[], b: unknown[], path: string, ops: Operation[]): void {
  const containers = a.some(isObject) || b.some(isObject);
  // Scalars compare as themselves; containers by their JSON text.
  const keyOf = containers ? (value: unknown) => (isObject(value) ? JSON.stringify(value) : scalarKey(value)) : scalarKey;
  const ka = a.map(keyOf);
  const kb = b.map(keyOf);

  let start = 0;
  while (start < a.length && start < b.length && ka[start] === kb[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && ka[endA - 1] === kb[endB - 1]) {
    endA--;
    endB--;
  }
  const script = alignment(ka, kb, start, endA, start, endB);
  emit(a, b, script, start, path, ops);
}

type Step = "=" | "-" | "+";

/** The shortest edit script for a[startA..endA) -> b[startB..endB), or an index-by-index one past the limit. */
function alignment(ka: string[], kb: string[], startA: number, endA: number, startB: number, endB: number): Step[] {
  const n = endA - startA;
  const m = endB - startB;
  if (n === 0) return new Array<Step>(m).fill("+");
  if (m === 0) return new Array<Step>(n).fill("-");
  const limit = Math.min(n + m, MAX_EDIT_DISTANCE);
  const offset = limit + 1;
  const v = new Int32Array(2 * limit + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= limit; d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && ka[startA + x] === kb[startB + y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, d, n, m);
    }
  }
  // Too far apart to align cheaply: pair elements by index, then add or remove the tail.
  const paired = Math.min(n, m);
  const steps: Step[] = [];
  for (let i = 0; i < paired; i++) steps.push("-", "+");
  for (let i = paired; i < n; i++) steps.push("-");
  for (let i = paired; i < m; i++) steps.push("+");
  return steps;
}

function backtrack(trace: Int32Array[], depth: number, n: number, m: number): Step[] {
  const steps: Step[] = [];
  let x = n;
  let y = m;
  for (let d = depth; d > 0; d--) {
    // trace[d] holds v[-d-1 .. d+1] as it was before round d.
    const v = trace[d]!;
    const at = (k: number) => v[k + d + 1]!;
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      steps.push("=");
      x--;
      y--;
    }
    steps.push(down ? "+" : "-");
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0) {
    steps.push("=");
    x--;
    y--;
  }
  return steps.reverse();
}

/**
 * Turns the edit script into operations, left to right, tracking the index in
 * the array as patched so far. Within a run of removals and insertions the
 * first ones are paired and diffed in place (an edited element); the rest are
 * removed or added.
 */
function emit(a: unknown[], b: unknown[], script: Step[], start: number, path: string, ops: Operation[]): void {
  let index = start;
  let x = start;
  let y = start;
  for (let s = 0; s < script.length; ) {
    if (script[s] === "=") {
      index++;
      x++;
      y++;
      s++;
      continue;
    }
    let removed = 0;
    let added = 0;
    while (s < script.length && script[s] !== "=") {
      if (script[s] === "-") removed++;
      else added++;
      s++;
    }
    const paired = Math.min(removed, added);
    for (let i = 0; i < paired; i++) {
      compareValues(a[x + i], b[y + i], `${path}/${index}`, ops);
      index++;
    }
    for (let i = paired; i < removed; i++) ops.push({ op: "remove", path: `${path}/${index}` });
    for (let i = paired; i < added; i++) {
      ops.push({ op: "add", path: `${path}/${index}`, value: b[y + i] });
      index++;
    }
    x += removed;
    y += added;
  }
}

function scalarKey(value: unknown): string {
  return typeof value === "string" ? `s${value}` : `${typeof value}${String(value)}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

function escape(key: string): string {
  return key.includes("~") || key.includes("/") ? key.replaceAll("~", "~0").replaceAll("/", "~1") : key;
}
