import { describe, expect, test } from "vitest";
import { checkArgsAgainstSchema } from "./args-schema.ts";

const schema = {
  type: "object",
  properties: {
    to: { type: "string", minLength: 3 },
    amount: { type: "integer", minimum: 1, maximum: 10_000 },
    currency: { enum: ["EUR", "USD"] },
    dryRun: { type: "boolean" },
    lines: { type: "array", items: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] } },
  },
  required: ["to", "amount"],
  additionalProperties: false,
};

describe("edited arguments against a tool's input schema", () => {
  test.each([
    ["a call the schema accepts", { to: "acct-1", amount: 50, currency: "EUR", dryRun: false, lines: [{ sku: "a" }] }, []],
    ["a number written as text", { to: "acct-1", amount: "50" }, [{ path: "$.amount", message: "must be a whole number, not string" }]],
    ["a fraction where a whole number is asked", { to: "acct-1", amount: 5.5 }, [{ path: "$.amount", message: "must be a whole number, not a fraction" }]],
    ["out of range", { to: "acct-1", amount: 20_000 }, [{ path: "$.amount", message: "must be at most 10000" }]],
    ["a missing required argument", { to: "acct-1" }, [{ path: "$.amount", message: "is required" }]],
    ["an argument the tool does not take", { to: "acct-1", amount: 5, memo: "x" }, [{ path: "$.memo", message: "is not an argument of this tool" }]],
    ["a value outside the enum", { to: "acct-1", amount: 5, currency: "GBP" }, [{ path: "$.currency", message: 'must be one of "EUR", "USD"' }]],
    ["too short a string", { to: "a", amount: 5 }, [{ path: "$.to", message: "must be at least 3 characters" }]],
    ["a nested item without its required key", { to: "acct-1", amount: 5, lines: [{}] }, [{ path: "$.lines[0].sku", message: "is required" }]],
    ["not an object at all", [1], [{ path: "$", message: "must be an object, not array" }]],
  ])("%s", (_name, args, problems) => {
    expect(checkArgsAgainstSchema(schema, args)).toEqual(problems);
  });

  test("no schema, or one that is not an object, checks nothing", () => {
    expect(checkArgsAgainstSchema(undefined, { anything: 1 })).toEqual([]);
    expect(checkArgsAgainstSchema("string", { anything: 1 })).toEqual([]);
  });
});
