// Edited arguments checked against the tool's JSON Schema (an MCP tool's
// inputSchema) before they are sent, so the operator hears "amount: must be a
// number" rather than the tool failing later. A common subset of the keywords
// (type, enum, const, required, properties, additionalProperties: false,
// items, minimum, maximum, minLength, maxLength); any other keyword is left to
// the tool. Pure; no code generation, so it runs under the console's CSP.
import { dequal } from "dequal";
import { pathOf } from "./risk.ts";
import type { PathSegment } from "./json-path.ts";

export interface SchemaProblem {
  /** The argument, as rules name it: $.amount, $.rows[0].id. */
  path: string;
  message: string;
}

type Schema = Record<string, unknown>;

const MAX_DEPTH = 32;

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function hasType(value: unknown, type: string): boolean {
  if (type === "integer") return typeof value === "number" && Number.isInteger(value);
  if (type === "number") return typeof value === "number" && Number.isFinite(value);
  return typeOf(value) === type;
}

const isSchema = (value: unknown): value is Schema => value !== null && typeof value === "object" && !Array.isArray(value);

function check(schema: Schema, value: unknown, segments: PathSegment[], problems: SchemaProblem[]): void {
  if (segments.length > MAX_DEPTH) return;
  const at = (message: string) => problems.push({ path: pathOf(segments), message });
  const types = typeof schema.type === "string" ? [schema.type] : Array.isArray(schema.type) ? schema.type.filter((type): type is string => typeof type === "string") : [];
  if (types.length && !types.some((type) => hasType(value, type))) {
    at(`must be ${types.map((type) => (type === "integer" ? "a whole number" : type === "array" || type === "object" ? `an ${type}` : type === "null" ? "null" : `a ${type}`)).join(" or ")}, not ${typeOf(value) === "number" && types.includes("integer") ? "a fraction" : typeOf(value)}`);
    return;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((allowed) => dequal(allowed, value))) {
    at(`must be one of ${schema.enum.map((allowed) => JSON.stringify(allowed)).join(", ")}`);
  }
  if ("const" in schema && !dequal(schema.const, value)) at(`must be ${JSON.stringify(schema.const)}`);
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) at(`must be at least ${schema.minimum}`);
    if (typeof schema.maximum === "number" && value > schema.maximum) at(`must be at most ${schema.maximum}`);
  }
  if (typeof value === "string") {
    const length = [...value].length;
    if (typeof schema.minLength === "number" && length < schema.minLength) at(`must be at least ${schema.minLength} characters`);
    if (typeof schema.maxLength === "number" && length > schema.maxLength) at(`must be at most ${schema.maxLength} characters`);
  }
  if (Array.isArray(value) && isSchema(schema.items)) {
    const items = schema.items;
    value.forEach((item, index) => check(items, item, [...segments, index], problems));
  }
  if (isSchema(value)) {
    const properties = isSchema(schema.properties) ? schema.properties : {};
    if (Array.isArray(schema.required)) {
      for (const name of schema.required) if (typeof name === "string" && !Object.hasOwn(value, name)) problems.push({ path: pathOf([...segments, name]), message: "is required" });
    }
    for (const [key, item] of Object.entries(value)) {
      const property = properties[key];
      if (isSchema(property)) check(property, item, [...segments, key], problems);
      else if (schema.additionalProperties === false) problems.push({ path: pathOf([...segments, key]), message: "is not an argument of this tool" });
    }
  }
}

/** What in `args` the schema refuses; empty when it passes (or when the schema says nothing checkable). */
export function checkArgsAgainstSchema(schema: unknown, args: unknown): SchemaProblem[] {
  if (!isSchema(schema)) return [];
  const problems: SchemaProblem[] = [];
  check(schema, args, [], problems);
  return problems;
}
