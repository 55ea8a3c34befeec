// JSON typed into a textarea: parsed, or a message saying where it is wrong.

export type JsonText = { ok: true; value: unknown } | { ok: false; message: string };

/** Empty text is `empty` (undefined when the field is optional). */
export function parseJsonText(text: string, empty: { value: unknown } | "required"): JsonText {
  if (!text.trim()) return empty === "required" ? { ok: false, message: "empty: write a JSON value such as {}" } : { ok: true, value: empty.value };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, message: `not valid JSON: ${(error as Error).message}` };
  }
}

/** Session metadata is an object of keys, as sessions store it. */
export function parseJsonObject(text: string, example = '{"tier": "gold"}'): JsonText {
  const parsed = parseJsonText(text, { value: undefined });
  if (!parsed.ok || parsed.value === undefined) return parsed;
  if (parsed.value === null || typeof parsed.value !== "object" || Array.isArray(parsed.value)) return { ok: false, message: `must be a JSON object such as ${example}` };
  return parsed;
}
