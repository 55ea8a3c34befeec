// What a request was asked, in one short line for the call chain: a text input's
// first line, or an object's first fields, each cut short.
const MAX_CHARS = 140;
const MAX_FIELDS = 3;
const MAX_VALUE_CHARS = 60;

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The first line of a text (marking that more follows), or a value as compact JSON. */
function oneLine(value: unknown, max: number): string {
  if (typeof value === "string") {
    const lines = value.trim().split(/\r?\n/);
    return cut(lines[0]!, max) + (lines.length > 1 && lines[0]!.length <= max ? " …" : "");
  }
  return cut(JSON.stringify(value) ?? "null", max);
}

/** Null when there is nothing to summarise. */
export function inputSummary(input: unknown): string | null {
  if (input === null || input === undefined) return null;
  if (typeof input !== "object" || Array.isArray(input)) return oneLine(input, MAX_CHARS);
  const entries = Object.entries(input as Record<string, unknown>);
  if (entries.length === 0) return null;
  const shown = entries.slice(0, MAX_FIELDS).map(([key, value]) => `${key}: ${oneLine(value, MAX_VALUE_CHARS)}`);
  if (entries.length > MAX_FIELDS) shown.push(`+${entries.length - MAX_FIELDS} more`);
  return cut(shown.join(" · "), MAX_CHARS);
}
