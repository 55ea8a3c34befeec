// Shared zod pieces for procedure inputs: ids, names and size-limited JSON.
import { z } from "zod";
import { jsonSize, LIMITS } from "../domain/json.ts";

export const zId = (prefix: string) =>
  z
    .string()
    .min(1)
    .max(64)
    .regex(new RegExp(`^${prefix}_[0-9a-z]+$`), `must be an id starting with ${prefix}_`);

export const zName = z.string().trim().min(1).max(LIMITS.nameChars);

/**
 * A JSON value. Inputs reach the procedures parsed by JSON.parse, so a value is
 * JSON by construction; zod's z.json() would walk every node of it again, which
 * was the largest part of the server's time on a 100-event trace batch.
 */
const zJsonValue = z.custom<z.core.util.JSONType>((value) => value !== undefined, "must be a JSON value");

/** Any JSON value no larger than `maxBytes` once serialised (serialising it is the check). */
export const zJson = (maxBytes: number) =>
  zJsonValue.refine((value) => fitsAsJson(value, maxBytes), {
    message: `must be at most ${Math.round(maxBytes / 1024)} KB as JSON`,
  });

export const zJsonObject = (maxBytes: number) =>
  z.record(z.string(), zJsonValue).refine((value) => fitsAsJson(value, maxBytes), {
    message: `must be at most ${Math.round(maxBytes / 1024)} KB as JSON`,
  });

/** False for a value too large, or one JSON cannot hold (a BigInt, a cycle: only in-process callers can pass those). */
function fitsAsJson(value: unknown, maxBytes: number): boolean {
  try {
    return jsonSize(value) <= maxBytes;
  } catch {
    return false;
  }
}
