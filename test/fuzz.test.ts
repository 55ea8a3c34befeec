// Every procedure of the API, fed hostile input over real HTTP, as an agent
// and as an admin: mostly inputs built from the procedure's own zod schema
// (the right fields, real ids, any Unicode, and now and then a lone surrogate,
// a huge or deeply nested value, a prototype key or a value of the wrong
// kind), and some shapeless JSON. Never a 5xx; every refusal says what was
// wrong; the audit chain stays intact. Before the random cases, each field of
// each procedure's input is sent once as null in an otherwise plain input.
// Procedures are read from the router, so a new one is fuzzed without anyone
// adding it here. Reproduce a failure with the seed it prints
// (FUZZ_SEED=<seed>); FUZZ_CASES sets the runs per procedure and principal:
// 4 in `npm test`, 25 with TOLLGATE_LONG_TESTS=1 (the long suite, on both
// databases).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { appRouter } from "../server/api/router.ts";
import { AGENT_KEY, ADMIN } from "./harness.ts";
import { useTestServer, type TestServer } from "./server.ts";
import { agentSdk, type OperatorClient } from "./clients.ts";

let test: TestServer;
let admin: OperatorClient;
// A liveness window of 3 s holds a long-poll (approval.await on the pending
// approval) for at most 1 s: with the default 90 s, the fuzzed waits were 31 of
// the file's 77 s, spent waiting and checking nothing more.
useTestServer(
  (server, client) => {
    test = server;
    admin = client;
  },
  { TOLLGATE_AGENT_LIVENESS_SECONDS: "3" },
);

const CASES_PER_PROCEDURE = Number(process.env.FUZZ_CASES ?? (process.env.TOLLGATE_LONG_TESTS === "1" ? 25 : 4));
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;

/** Calls that would end the fuzzer's own credentials, or wait by design. */
const SKIPPED: Record<string, string> = {
  "auth.logout": "would end the session the fuzzer calls with",
  "approval.onDecision": "a server-sent event stream that stays open by design (its input is the same schema as approval.await's)",
};

type Kind = "query" | "mutation" | "subscription";
const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, { _def: { type: Kind; inputs: ZodNode[] } }>)
  .map(([path, procedure]) => ({ path, kind: procedure._def.type, schema: procedure._def.inputs.at(-1) }))
  .filter(({ path }) => !(path in SKIPPED));

const FIELDS = [
  "approvalId", "approvalIds", "requestId", "sessionId", "taskId", "parentRequestId", "keyId", "tokenId", "operatorId", "policyId", "channelId",
  "agent", "tool", "args", "input", "output", "state", "memory", "config", "title", "reason", "message", "action", "status", "email", "password",
  "name", "role", "limit", "cursor", "timeoutMs", "ttlHours", "text", "everyone", "disabled", "version", "fromVersion", "toVersion", "rules", "match",
];

const hostileString = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("\ud800", "x\udfffy", "\u0000", "﻿", "‮", "'; DROP TABLE \"Approval\"; --", "<script>alert(1)</script>", "../../etc/passwd", "apr_", "req_0", "%00", "__proto__"),
  fc.constantFrom("apr_", "req_", "ses_", "tsk_", "key_", "ops_", "op_", "pol_", "chn_").map((prefix) => `${prefix}${"0".repeat(22)}`),
  fc.integer({ min: 1, max: 5 }).map((n) => "z".repeat(n * 40_000)),
);
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.constantFrom(-1, 0, 1e308, -1e308, 2 ** 53 + 1, 0.5, true, false, null),
  fc.jsonValue({ maxDepth: 3 }),
  fc.integer({ min: 50, max: 300 }).map((depth) => JSON.parse("[".repeat(depth) + "]".repeat(depth)) as unknown),
  fc.array(hostileString, { maxLength: 5 }),
);
/** Ids of real rows, so inputs get past "not found" into the use cases. */
const real: Record<string, string> = {};
const ID_FIELDS = ["approvalId", "requestId", "sessionId", "taskId", "parentRequestId"];
const realOr = (field: string) => fc.oneof({ weight: 3, arbitrary: fc.constant(null).map(() => real[field] ?? null) }, { weight: 1, arbitrary: hostileValue });

const TEXT_FIELDS = ["agent", "tool", "title", "reason", "message", "action", "status", "email", "password", "name", "role", "cursor", "text"];
const NUMBER_FIELDS = ["limit", "timeoutMs", "ttlHours", "version", "fromVersion", "toVersion"];
const JSON_FIELDS = ["args", "input", "output", "state", "memory", "config", "match", "rules"];
const hostileNumber = fc.oneof(fc.integer({ min: -5, max: 1000 }), fc.constantFrom(0, -1, 2 ** 31, 2 ** 53 + 1, 1e308, 0.5));
const valueFor = (field: string): fc.Arbitrary<unknown> =>
  ID_FIELDS.includes(field)
    ? realOr(field)
    : field === "approvalIds"
      ? fc.constant(null).map(() => [real.approvalId])
      : TEXT_FIELDS.includes(field)
        ? fc.oneof({ weight: 3, arbitrary: hostileString }, { weight: 1, arbitrary: hostileValue })
        : NUMBER_FIELDS.includes(field)
          ? fc.oneof({ weight: 3, arbitrary: hostileNumber }, { weight: 1, arbitrary: hostileValue })
          : JSON_FIELDS.includes(field)
            ? fc.oneof(fc.dictionary(hostileString, hostileValue, { maxKeys: 4 }), hostileValue)
            : fc.oneof(fc.boolean(), hostileValue);

/**
 * Objects shaped like many procedures' inputs at once (zod drops the keys a
 * procedure does not take): real ids where ids go, hostile values of the
 * expected type elsewhere, so most inputs get past validation into the use cases.
 */
const shapedInput = fc.record(Object.fromEntries(FIELDS.map((field) => [field, valueFor(field)])), { requiredKeys: [] });

interface ZodNode {
  _zod: { def: { type: string; shape?: Record<string, ZodNode>; innerType?: ZodNode; element?: ZodNode; options?: ZodNode[]; in?: ZodNode; entries?: Record<string, string>; values?: unknown[]; valueType?: ZodNode } };
}

/**
 * Values shaped by a procedure's own input schema (zod's definition, walked):
 * the right fields and types, real ids where ids go, and hostile content
 * (lone surrogates, huge or odd strings, edge numbers) inside, with now and
 * then a value of the wrong kind. These get past validation into the use cases.
 */
function fromSchema(node: ZodNode | undefined, field = ""): fc.Arbitrary<unknown> {
  const def = node?._zod.def;
  if (!def) return hostileValue;
  const wrongSometimes = (arbitrary: fc.Arbitrary<unknown>) => fc.oneof({ weight: 12, arbitrary }, { weight: 1, arbitrary: hostileValue });
  switch (def.type) {
    case "object": {
      const shape = Object.entries(def.shape ?? {});
      // Required fields are always there (else nothing gets past validation); optional ones half the time.
      const optional = (value: ZodNode) => ["optional", "default", "prefault"].includes(value._zod.def.type);
      // Optional ones a third of the time: each is another chance to fail validation before the use case runs.
      return fc.record(
        Object.fromEntries(shape.map(([key, value]) => [key, optional(value) ? fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fromSchema(value, key) }) : fromSchema(value, key)])),
      );
    }
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "readonly":
    case "catch":
      return fromSchema(def.innerType, field);
    case "pipe":
      return fromSchema(def.in, field);
    case "array":
      return fc.array(fromSchema(def.element, field), { maxLength: 4 });
    case "union":
      return fc.oneof(...(def.options ?? []).map((option) => fromSchema(option, field)));
    case "enum":
      return wrongSometimes(fc.constantFrom(...Object.values(def.entries ?? { x: "x" })));
    case "literal":
      return wrongSometimes(fc.constantFrom(...(def.values ?? [null])));
    case "string":
      if (ID_FIELDS.includes(field) || field === "approvalIds") return realOr(field === "approvalIds" ? "approvalId" : field);
      // Mostly text any user might send (any Unicode), some of it hostile.
      return wrongSometimes(fc.oneof({ weight: 2, arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }) }, { weight: 1, arbitrary: hostileString }));
    case "number":
    case "int":
      return wrongSometimes(hostileNumber);
    case "boolean":
      return wrongSometimes(fc.boolean());
    case "record":
      return fc.dictionary(hostileString, fromSchema(def.valueType), { maxKeys: 4 });
    default:
      return hostileValue;
  }
}

/**
 * The plainest input a procedure's schema describes: its required fields, real
 * ids where ids go, "x" for text, the smallest number, the first choice.
 */
function plainValue(node: ZodNode | undefined, field = ""): unknown {
  const def = node?._zod.def;
  if (!def) return {};
  switch (def.type) {
    case "object":
      return Object.fromEntries(
        Object.entries(def.shape ?? {})
          .filter(([, value]) => !["optional", "default", "prefault"].includes(value._zod.def.type))
          .map(([key, value]) => [key, plainValue(value, key)]),
      );
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "readonly":
    case "catch":
      return plainValue(def.innerType, field);
    case "pipe":
      return plainValue(def.in, field);
    case "array":
      return [plainValue(def.element, field)];
    case "union":
      return plainValue(def.options?.[0], field);
    case "enum":
      return Object.values(def.entries ?? { x: "x" })[0];
    case "literal":
      return def.values?.[0];
    case "string":
      return real[field === "approvalIds" ? "approvalId" : field] ?? "x";
    case "number":
    case "int":
      return 1000;
    case "boolean":
      return false;
    default:
      return {};
  }
}

/** A procedure's plain input with one of its fields (required or optional) null, for each field. */
function withEachFieldNull(schema: ZodNode | undefined): unknown[] {
  let node = schema;
  while (node && node._zod.def.type !== "object" && (node._zod.def.innerType ?? node._zod.def.in)) node = node._zod.def.innerType ?? node._zod.def.in;
  const shape = node?._zod.def.type === "object" ? Object.keys(node._zod.def.shape ?? {}) : [];
  const plain = plainValue(schema) as Record<string, unknown>;
  return [null, ...shape.map((field) => ({ ...plain, [field]: null }))];
}

const hostileInput: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  { weight: 4, arbitrary: shapedInput },
  fc.dictionary(fc.constantFrom(...FIELDS), hostileValue, { maxKeys: 6 }),
  fc.dictionary(fc.constantFrom(...FIELDS), hostileValue, { maxKeys: 6 }).map((input) => {
    const rest = JSON.stringify(input).slice(1, -1);
    return JSON.parse(`{"__proto__":{"polluted":true}${rest ? `,${rest}` : ""}}`) as unknown;
  }),
);

/** A 5xx fails the property; a refusal must carry a message. */
async function answerChecked(path: string, kind: Kind, value: unknown, headers: Record<string, string>): Promise<void> {
  const { status, text } = await send(path, kind, value, headers);
  if (status >= 500) throw new Error(`answered ${status}: ${text.slice(0, 500)}`);
  // Node's HTTP parser refuses an oversized URL (a huge query input) before any handler runs.
  if (status === 431 || status === 414) return;
  if (status >= 400) {
    let message: string | undefined;
    try {
      message = (JSON.parse(text) as { error?: { message?: string } }).error?.message;
    } catch {
      // not JSON: reported below
    }
    if (!message) throw new Error(`refused (${status}) without a message: ${text.slice(0, 300)}`);
  }
}

async function send(path: string, kind: Kind, input: unknown, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const body = JSON.stringify(input) ?? "null";
  const response =
    kind === "mutation"
      ? await fetch(`${test.url}/api/trpc/${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body })
      : await fetch(`${test.url}/api/trpc/${path}?input=${encodeURIComponent(body)}`, { headers });
  return { status: response.status, text: await response.text() };
}

describe("fuzzing every procedure", () => {
  it("fuzz: hostile input to every procedure, as an agent and as an admin, never gets a 5xx and every refusal names what was wrong", { timeout: 600_000 }, async () => {
    const { token } = await admin.auth.createToken.mutate({ name: "fuzzer", password: ADMIN.password });
    const sdk = agentSdk(test.url);
    // Each procedure gets rows of its own: one before it may have ended the request or decided the approval.
    const freshRows = async () => {
      const { sessionId } = await sdk.openSession({ title: "fuzzed" });
      const begun = await sdk.begin({ sessionId, agent: "fuzzed-agent" });
      const asked = await sdk.call("approval.request", { requestId: begun.requestId, tool: "fuzzed_tool", args: { a: 1 } });
      Object.assign(real, { sessionId, taskId: begun.taskId, requestId: begun.requestId, parentRequestId: begun.requestId, approvalId: asked.approvalId });
    };
    const principals = { agent: { authorization: `Bearer ${AGENT_KEY}` }, admin: { authorization: `Bearer ${token}` } };
    expect(procedures.length).toBeGreaterThan(40);
    for (const { path, kind, schema } of procedures) {
      await freshRows();
      const input = fc.oneof({ weight: 3, arbitrary: fromSchema(schema) }, { weight: 1, arbitrary: hostileInput });
      for (const [who, headers] of Object.entries(principals)) {
        for (const value of withEachFieldNull(schema)) {
          await answerChecked(path, kind, value, headers).catch((error: unknown) => {
            throw new Error(`${path} as ${who}: ${String(error).slice(0, 600)}\ninput: ${JSON.stringify(value).slice(0, 400)}`);
          });
        }
        const result = await fc.check(
          fc.asyncProperty(input, (value) => answerChecked(path, kind, value, headers)),
          { numRuns: CASES_PER_PROCEDURE, ...(SEED !== undefined ? { seed: SEED } : {}) },
        );
        if (result.failed) {
          const input = JSON.stringify(result.counterexample?.[0]) ?? "undefined";
          throw new Error(`${path} as ${who} (FUZZ_SEED=${result.seed}): ${String(result.errorInstance).slice(0, 600)}\ninput: ${input.slice(0, 400)}${input.length > 400 ? `… (${input.length} characters)` : ""}`);
        }
      }
    }
    sdk.close();
    expect((await admin.audit.verify.query()).ok).toBe(true);
    expect(Object.prototype).not.toHaveProperty("polluted");
  });
});
