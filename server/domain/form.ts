// Forms an agent asks a person to fill in (an MCP elicitation's requested
// schema): a flat JSON object of primitive fields, as MCP allows, checked once
// when asked and again against every answer, so the agent only ever receives
// values of the shape it asked for.
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { z } from "zod";
import { DomainError } from "./errors.ts";

const described = { title: z.string().max(200).optional(), description: z.string().max(2_000).optional() };
const choices = z.array(z.string().max(500)).min(1).max(100);
const titledChoices = z.array(z.object({ const: z.string().max(500), title: z.string().max(500) })).min(1).max(100);

const zStringField = z.object({
  type: z.literal("string"),
  ...described,
  minLength: z.number().int().min(0).optional(),
  maxLength: z.number().int().min(0).max(100_000).optional(),
  format: z.enum(["email", "uri", "date", "date-time"]).optional(),
  enum: choices.optional(),
  enumNames: z.array(z.string().max(500)).optional(),
  oneOf: titledChoices.optional(),
  default: z.string().optional(),
});
const zNumberField = z.object({
  type: z.enum(["number", "integer"]),
  ...described,
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  default: z.number().optional(),
});
const zBooleanField = z.object({ type: z.literal("boolean"), ...described, default: z.boolean().optional() });
/** Several of a list of choices (MCP's multi-select). */
const zChoicesField = z.object({
  type: z.literal("array"),
  ...described,
  minItems: z.number().int().min(0).optional(),
  maxItems: z.number().int().min(0).optional(),
  items: z.union([z.object({ type: z.literal("string"), enum: choices }), z.object({ anyOf: titledChoices })]),
  default: z.array(z.string()).optional(),
});

const zField = z.discriminatedUnion("type", [zStringField, zNumberField, zBooleanField, zChoicesField]);

const zFormSchema = z
  .object({
    type: z.literal("object"),
    properties: z
      .record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "field names are 1 to 64 letters, digits, _ . or -"), zField)
      .refine((fields) => Object.keys(fields).length >= 1 && Object.keys(fields).length <= 50, "a form has 1 to 50 fields"),
    required: z.array(z.string()).optional(),
  })
  .refine((form) => (form.required ?? []).every((name) => Object.hasOwn(form.properties, name)), {
    message: "every name in required must be a field of properties",
    path: ["required"],
  })
  .refine((form) => new Set(form.required ?? []).size === (form.required ?? []).length, {
    message: "a field is named in required more than once",
    path: ["required"],
  });

export type FormSchema = z.infer<typeof zFormSchema>;
export type FormField = z.infer<typeof zField>;

/** The requested schema, checked: primitive fields only (MCP's form mode), at most 50. */
export function parseFormSchema(value: unknown): FormSchema {
  const parsed = zFormSchema.safeParse(value);
  if (parsed.success) {
    // What zod let through, the answers' validator must take too: compiled now, an error is the agent's.
    try {
      validatorFor(parsed.data);
    } catch (error) {
      throw new DomainError("BAD_INPUT", `form: ${(error as Error).message}`, { field: "form" });
    }
    return parsed.data;
  }
  const issue = parsed.error.issues[0]!;
  const where = ["form", ...issue.path.map(String)].join(".");
  // A bad field name is reported with the name's own problem inside.
  const message = issue.code === "invalid_key" ? (issue.issues[0]?.message ?? issue.message) : issue.message;
  throw new DomainError(
    "BAD_INPUT",
    `${where}: ${message}; a form is {"type": "object", "properties": {...}, "required": [...]} whose fields are strings (optionally an enum or a format), numbers, integers, booleans or lists of choices`,
    { field: where },
  );
}

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats.default(ajv, ["email", "uri", "date", "date-time"]);

// Compiled validators by schema text: ajv keeps every schema it compiles, so
// each form is compiled once, and the oldest are let go past a bound.
const VALIDATORS_KEPT = 200;
const validators = new Map<string, ValidateFunction>();

function validatorFor(form: FormSchema): ValidateFunction {
  const key = JSON.stringify(form);
  const known = validators.get(key);
  if (known) return known;
  const schema = { ...form, additionalProperties: false };
  const validate = ajv.compile(schema);
  validators.set(key, validate);
  if (validators.size > VALIDATORS_KEPT) {
    const [oldest, oldestValidate] = validators.entries().next().value!;
    validators.delete(oldest);
    ajv.removeSchema(oldestValidate.schema as object);
  }
  return validate;
}

/**
 * Refuses an answer that is not what the form asked for: a missing required
 * field, a value of another type, out of range or not one of the choices, or a
 * field the form does not have.
 */
export function checkFormAnswer(approvalId: string, form: FormSchema, answer: unknown): void {
  const validate = validatorFor(form);
  if (validate(answer)) return;
  const problems = (validate.errors ?? []).slice(0, 5).map((error) => {
    const field = error.instancePath ? error.instancePath.slice(1).replaceAll("/", ".") : "";
    if (error.keyword === "required") return `${String(error.params.missingProperty)} is required`;
    if (error.keyword === "additionalProperties") return `${String(error.params.additionalProperty)} is not a field of this form`;
    return `${field || "the answer"} ${error.message ?? "is not valid"}`;
  });
  throw new DomainError("BAD_INPUT", `the answer to form ${approvalId} does not fit its fields: ${problems.join("; ")}`, { field: "args" });
}
