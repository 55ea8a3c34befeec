import { describe, expect, test } from "vitest";
import { argsOf, fieldsOf } from "./args-fields";

describe("the edited arguments as fields", () => {
  const proposed = { to: "ops@example.com", body: "Hello,\n\nthe drafts are purged.", amount: 5000, notify: false, rows: [{ id: 1 }], note: null };

  test("each value keeps its type and the arguments keep their order", () => {
    const fields = fieldsOf(proposed);
    expect(fields.map((field) => [field.key, field.kind])).toEqual([
      ["to", "text"],
      ["body", "text"],
      ["amount", "number"],
      ["notify", "boolean"],
      ["rows", "json"],
      ["note", "json"],
    ]);
    const back = argsOf(fields);
    expect(back).toEqual({ ok: true, value: proposed });
    expect(Object.keys(back.ok ? back.value : {})).toEqual(Object.keys(proposed));
  });

  test("a text with line breaks is edited as several lines, a short one as one", () => {
    const [to, body] = fieldsOf(proposed);
    expect(to).toMatchObject({ multiline: false });
    expect(body).toMatchObject({ multiline: true, text: "Hello,\n\nthe drafts are purged." });
  });

  test("a number field that says no number, or JSON that does not parse, names its argument", () => {
    const fields = fieldsOf(proposed).map((field) => (field.key === "amount" ? { ...field, text: "50 EUR" } : field));
    expect(argsOf(fields)).toEqual({ ok: false, key: "amount", message: "must be a number (it was one as proposed)" });
    const json = fieldsOf(proposed).map((field) => (field.key === "rows" ? { ...field, text: "[{" } : field));
    expect(argsOf(json)).toMatchObject({ ok: false, key: "rows" });
  });

  test("a number edited stays a number; the text of a string that looks like one stays text", () => {
    const fields = fieldsOf({ amount: 1, code: "007" }).map((field) => (field.key === "amount" ? { ...field, text: "50" } : field));
    expect(argsOf(fields)).toEqual({ ok: true, value: { amount: 50, code: "007" } });
  });
});
