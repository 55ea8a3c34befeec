// Shared zod pieces for procedure inputs: ids, names and size-limited JSON.
import { z } from "zod";
import { LIMITS } from "../domain/json.ts";
import { hiddenCharacterProblem } from "../domain/names.ts";

export const zId = (prefix: string) =>
  z
    .string()
    .min(1)
    .max(64)
    .regex(new RegExp(`^${prefix}_[0-9a-z]+$`), `must be an id starting with ${prefix}_`);

export const zName = z.string().trim().min(1).max(LIMITS.nameChars);

/** Refuses text holding a character nobody sees (zero-width, bidi, CR/LF...), naming it. */
export const visibleOnly = (text: string, context: z.RefinementCtx) => {
  const problem = hiddenCharacterProblem(text);
  if (problem) context.addIssue({ code: "custom", message: problem });
};

/** A tool or agent name, which rules match: every character visible (server/domain/names.ts). */
export const zCallName = zName.superRefine(visibleOnly);

/**
 * A JSON value. Inputs reach the procedures parsed by JSON.parse, so a value is
 * JSON but for one thing: a number too large for a double (1e400) parses as
 * Infinity, which JSON.stringify would store as null. Serialising the value
 * once checks that and its size together; zod's z.json() walked every node
 * with a schema, which was the largest part of the server's own time on a
 * 100-event trace batch.
 */
const zJsonValue = z.custom<z.core.util.JSONType>((value) => value !== undefined, "must be a JSON value");

/** Any JSON value no larger than `maxBytes` once serialised. */
export const zJson = (maxBytes: number) => zJsonValue.superRefine(withinJsonLimits(maxBytes));

export const zJsonObject = (maxBytes: number) => z.record(z.string(), zJsonValue).superRefine(withinJsonLimits(maxBytes));

class NotJson extends Error {}

/** Throws NotJson at a number JSON cannot hold, as JSON.stringify meets it. */
function finiteNumbersOnly(_key: string, value: unknown): unknown {
  if (typeof value === "number" && !Number.isFinite(value)) throw new NotJson("must not contain a number too large for JSON (it would be Infinity)");
  return value;
}

function withinJsonLimits(maxBytes: number) {
  return (value: unknown, context: z.RefinementCtx) => {
    let bytes: number;
    try {
      bytes = Buffer.byteLength(JSON.stringify(value, finiteNumbersOnly), "utf8");
    } catch (error) {
      // A BigInt or a cycle: only in-process callers can pass those.
      context.addIssue({ code: "custom", message: error instanceof NotJson ? error.message : "must be a JSON value" });
      return;
    }
    if (bytes > maxBytes) context.addIssue({ code: "custom", message: `must be at most ${Math.round(maxBytes / 1024)} KB as JSON` });
  };
}
