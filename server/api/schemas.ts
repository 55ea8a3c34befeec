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

/** Any JSON value no larger than `maxBytes` once serialised. */
export const zJson = (maxBytes: number) =>
  z.json().refine((value) => jsonSize(value) <= maxBytes, {
    message: `must be at most ${Math.round(maxBytes / 1024)} KB as JSON`,
  });

export const zJsonObject = (maxBytes: number) =>
  z.record(z.string(), z.json()).refine((value) => jsonSize(value) <= maxBytes, {
    message: `must be at most ${Math.round(maxBytes / 1024)} KB as JSON`,
  });
