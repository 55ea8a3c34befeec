import { describe, expect, it } from "vitest";
import { checkFormAnswer, parseFormSchema } from "./form.ts";

const form = parseFormSchema({
  type: "object",
  properties: {
    email: { type: "string", format: "email" },
    seats: { type: "integer", minimum: 1, maximum: 10 },
    plan: { type: "string", oneOf: [{ const: "basic", title: "Basic" }, { const: "pro", title: "Pro" }] },
    extras: { type: "array", items: { type: "string", enum: ["support", "sso"] } },
    when: { type: "string", format: "date" },
    invoice: { type: "boolean" },
  },
  required: ["email"],
});

describe("form schema", () => {
  it.each([
    [{ type: "object", properties: {} }, "form.properties: a form has 1 to 50 fields"],
    [{ type: "object", properties: { a: { type: "object" } } }, "form.properties.a.type"],
    [{ type: "object", properties: { "a b": { type: "string" } } }, "field names are"],
    [{ type: "object", properties: { a: { type: "string" } }, required: ["b"] }, "form.required: every name in required"],
    [{ type: "object", properties: { a: { type: "string" } }, required: ["toString"] }, "form.required: every name in required"],
    [{ type: "object", properties: { a: { type: "string" } }, required: ["a", "a"] }, "form.required: a field is named in required more than once"],
    [{ type: "array" }, "form.type"],
    ["a form", "form: "],
  ])("refuses %j, naming where", (schema, message) => {
    expect(() => parseFormSchema(schema)).toThrow(message);
  });

  it("compiles each form once, however often it is answered", () => {
    const again = parseFormSchema(JSON.parse(JSON.stringify(form)));
    for (let i = 0; i < 3; i++) expect(() => checkFormAnswer("apr_1", again, { email: "a@example.com" })).not.toThrow();
  });

  it("keeps the fields in the order the agent gave them", () => {
    expect(Object.keys(form.properties)).toEqual(["email", "seats", "plan", "extras", "when", "invoice"]);
  });
});

describe("form answers", () => {
  it.each([
    [{ email: "a@example.com" }],
    [{ email: "a@example.com", seats: 10, plan: "pro", extras: ["sso"], when: "2026-12-01", invoice: false }],
  ])("accepts %j", (answer) => {
    expect(() => checkFormAnswer("apr_1", form, answer)).not.toThrow();
  });

  it.each([
    [{}, "email is required"],
    [{ email: "nope" }, 'email must match format "email"'],
    [{ email: "a@example.com", seats: 1.5 }, "seats must be integer"],
    [{ email: "a@example.com", seats: 11 }, "seats must be <= 10"],
    [{ email: "a@example.com", plan: "gold" }, "plan must match"],
    [{ email: "a@example.com", extras: ["fax"] }, "extras.0 must be equal to one of the allowed values"],
    [{ email: "a@example.com", when: "tomorrow" }, 'when must match format "date"'],
    [{ email: "a@example.com", colour: "red" }, "colour is not a field of this form"],
    ["a@example.com", "the answer must be object"],
  ])("refuses %j: %s", (answer, message) => {
    expect(() => checkFormAnswer("apr_1", form, answer)).toThrow(message);
  });
});
