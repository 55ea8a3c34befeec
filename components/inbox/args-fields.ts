// The edited arguments as one field per argument: a string stays a string
// (multi-line text when it is long), a number a number, a boolean a boolean,
// anything else JSON; the agent's order is kept. Pure, for the editor.

export type ArgField =
  | { key: string; kind: "text"; text: string; multiline: boolean }
  | { key: string; kind: "number"; text: string }
  | { key: string; kind: "boolean"; value: boolean }
  | { key: string; kind: "json"; text: string };

/** A string this long, or with a line break, is edited in a multi-line box. */
const SHORT_TEXT = 80;

export const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

export function fieldsOf(args: Record<string, unknown>): ArgField[] {
  return Object.entries(args).map(([key, value]): ArgField => {
    if (typeof value === "string") return { key, kind: "text", text: value, multiline: value.includes("\n") || value.length > SHORT_TEXT };
    if (typeof value === "number") return { key, kind: "number", text: String(value) };
    if (typeof value === "boolean") return { key, kind: "boolean", value };
    return { key, kind: "json", text: JSON.stringify(value, null, 2) };
  });
}

const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

export type FieldsResult = { ok: true; value: Record<string, unknown> } | { ok: false; key: string; message: string };

/** The arguments the fields say, in their order, or the first field that says nothing valid. */
export function argsOf(fields: readonly ArgField[]): FieldsResult {
  const value: Record<string, unknown> = {};
  for (const field of fields) {
    if (field.kind === "text") value[field.key] = field.text;
    else if (field.kind === "boolean") value[field.key] = field.value;
    else if (field.kind === "number") {
      const text = field.text.trim();
      if (!NUMBER.test(text) || !Number.isFinite(Number(text))) return { ok: false, key: field.key, message: "must be a number (it was one as proposed)" };
      value[field.key] = Number(text);
    } else {
      try {
        value[field.key] = JSON.parse(field.text);
      } catch (error) {
        return { ok: false, key: field.key, message: `is not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
      }
    }
  }
  return { ok: true, value };
}
