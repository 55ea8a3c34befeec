import { describe, expect, it } from "vitest";
import { errorOf } from "../testing.ts";
import { jsonSize } from "../json.ts";
import {
  DEFAULT_INACTIVITY_WINDOW_MS,
  activeEntities,
  assembleContext,
  lookupEntity,
  recentToolOutputs,
  type Entity,
  type Turn,
} from "./context.ts";


const NOW = new Date("2026-03-01T12:00:00.000Z");
const HOUR = 60 * 60 * 1000;
const hoursAgo = (hours: number) => new Date(NOW.getTime() - hours * HOUR).toISOString();

function entity(id: string, name: string, idleHours: number, extra: Partial<Entity> = {}): Entity {
  return { id, name, lastActiveAt: hoursAgo(idleHours), ...extra };
}

const ENTITIES: Entity[] = [
  entity("ent_acme", "Acme Corp", 1, { type: "company", data: { tier: "gold" } }),
  entity("ent_globex", "Globex Corporation", 2, { type: "company" }),
  entity("ent_initech", "Initech", 30),
  entity("ent_widgets", "Acme Widgets Ltd", 3),
  entity("ent_sg", "Société Générale", 4, { type: "bank" }),
];

function turn(requestId: string, tools: string[]): Turn {
  return { requestId, at: hoursAgo(1), toolCalls: tools.map((tool, i) => ({ callId: `${requestId}_c${i}`, tool, result: { big: "x".repeat(100) } })) };
}

describe("activeEntities", () => {
  it("context: an entity idle 8h is expired and one idle 6h is active, with the 7h default", () => {
    const idle6 = entity("ent_6", "Six", 6);
    const idle8 = entity("ent_8", "Eight", 8);
    expect(activeEntities([idle6, idle8], NOW)).toEqual({ active: [idle6], expired: [idle8] });
    expect(DEFAULT_INACTIVITY_WINDOW_MS).toBe(7 * HOUR);
  });

  it("context: an entity idle exactly the window has expired", () => {
    const atEdge = entity("ent_7", "Seven", 7);
    const justInside = { ...atEdge, lastActiveAt: new Date(NOW.getTime() - 7 * HOUR + 1).toISOString() };
    expect(activeEntities([atEdge, justInside], NOW).expired).toEqual([atEdge]);
  });

  it("context: the window is configurable", () => {
    const idle2 = entity("ent_2", "Two", 2);
    expect(activeEntities([idle2], NOW, 1 * HOUR).expired).toEqual([idle2]);
    expect(activeEntities([idle2], NOW, 3 * HOUR).active).toEqual([idle2]);
  });

  it("context: activity stamped in the future (clock skew) counts as active", () => {
    const ahead = entity("ent_future", "Future", -1);
    expect(activeEntities([ahead], NOW).active).toEqual([ahead]);
  });

  it("context: an unparsable lastActiveAt is BAD_INPUT naming the entity", () => {
    const broken = { ...entity("ent_x", "X", 1), lastActiveAt: "last tuesday" };
    const error = errorOf(() => activeEntities([broken], NOW));
    expect(error.code).toBe("BAD_INPUT");
    expect(error.message).toMatch(/^entity ent_x has lastActiveAt "last tuesday", not an ISO timestamp/);
  });

  it.each([0, -5, Number.NaN])("context: an inactivity window of %s is BAD_INPUT", (windowMs) => {
    expect(errorOf(() => activeEntities([], NOW, windowMs)).details).toEqual({ field: "inactivityWindowMs" });
  });

  it("context: an invalid now is BAD_INPUT", () => {
    expect(errorOf(() => activeEntities([], new Date("nope"))).details).toEqual({ field: "now" });
  });
});

describe("recentToolOutputs", () => {
  // 5 turns with tools and 2 without, interleaved.
  const turns: Turn[] = [
    turn("req_1", ["search"]),
    turn("req_2", []),
    turn("req_3", ["search", "fetch"]),
    turn("req_4", ["crm_lookup"]),
    turn("req_5", []),
    turn("req_6", ["send_email"]),
    turn("req_7", ["fetch"]),
  ];

  it("context: only the 3 most recent turns with tool calls are kept, oldest first", () => {
    expect(recentToolOutputs(turns).map((t) => t.requestId)).toEqual(["req_4", "req_6", "req_7"]);
  });

  it("context: tool outputs are compact: call id and tool name, no results", () => {
    expect(recentToolOutputs(turns, 4)[0]).toEqual({
      requestId: "req_3",
      calls: [
        { id: "req_3_c0", name: "search" },
        { id: "req_3_c1", name: "fetch" },
      ],
    });
  });

  it("context: fewer tool turns than N are all kept, and N = 0 keeps none", () => {
    expect(recentToolOutputs(turns, 10)).toHaveLength(5);
    expect(recentToolOutputs(turns, 0)).toEqual([]);
  });

  it.each([-1, 2.5])("context: recentTurns %s is BAD_INPUT", (count) => {
    expect(errorOf(() => recentToolOutputs(turns, count)).details).toEqual({ field: "recentTurns" });
  });
});

describe("lookupEntity", () => {
  const best = (query: string) => lookupEntity(ENTITIES, query)[0]?.id;

  it.each([
    ["the exact name", "Acme Corp", "ent_acme"],
    ["another case", "acme corp", "ent_acme"],
    ["a doubled letter", "Acmee", "ent_acme"],
    ["swapped letters", "Acme Crop", "ent_acme"],
    ["a dropped letter", "Globx", "ent_globex"],
    ["a misspelling", "Initek", "ent_initech"],
    ["no accents", "societe generale", "ent_sg"],
  ])("context: a lookup by %s finds the entity", (_name, query, id) => {
    expect(best(query)).toBe(id);
  });

  it("context: an exact match scores 1 and ranks above a typo's match", () => {
    const [exact] = lookupEntity(ENTITIES, "Acme Corp");
    const [typo] = lookupEntity(ENTITIES, "Acmee");
    expect(exact).toMatchObject({ id: "ent_acme", name: "Acme Corp", type: "company", score: 1 });
    expect(typo?.score).toBeGreaterThan(0.5);
    expect(typo?.score).toBeLessThan(1);
  });

  it("context: an unrelated query matches nothing", () => {
    expect(lookupEntity(ENTITIES, "Zebra Holdings")).toEqual([]);
  });

  it("context: the limit caps the matches, best first", () => {
    const matches = lookupEntity(ENTITIES, "acme", { limit: 1 });
    expect(matches.map((m) => m.id)).toEqual(["ent_acme"]);
    expect(lookupEntity(ENTITIES, "acme").map((m) => m.id)).toEqual(["ent_acme", "ent_widgets"]);
  });

  it("context: an empty query or a limit below 1 is BAD_INPUT", () => {
    expect(errorOf(() => lookupEntity(ENTITIES, "  ")).details).toEqual({ field: "lookups" });
    expect(errorOf(() => lookupEntity(ENTITIES, "acme", { limit: 0 })).details).toEqual({ field: "limit" });
  });
});

describe("assembleContext", () => {
  const turns = [turn("req_1", ["search"]), turn("req_2", []), turn("req_3", ["a"]), turn("req_4", ["b"]), turn("req_5", ["c"])];

  it("context: explicit state, expired ids, recent tool turns and lookups, in priority order", () => {
    const context = assembleContext({ entities: ENTITIES, turns, lookups: ["acmee", "initek"], now: NOW });
    expect(Object.keys(context)).toEqual(["explicit", "expired", "recentToolOutputs", "lookups", "sizeBytes"]);
    expect(context.explicit.entities.map((e) => e.id)).toEqual(["ent_acme", "ent_globex", "ent_widgets", "ent_sg"]);
    expect(context.expired).toEqual(["ent_initech"]);
    expect(context.recentToolOutputs.map((t) => t.requestId)).toEqual(["req_3", "req_4", "req_5"]);
    expect(context.lookups.map((l) => [l.query, l.matches[0]?.id])).toEqual([
      ["acmee", "ent_acme"],
      ["initek", "ent_initech"],
    ]);
  });

  it("context: explicit entities keep their data; lookups carry only id, name, type and score", () => {
    const context = assembleContext({ entities: ENTITIES, turns: [], lookups: ["Acme Corp"], now: NOW });
    expect(context.explicit.entities[0]).toEqual(ENTITIES[0]);
    expect(context.lookups[0]?.matches[0]).toEqual({ id: "ent_acme", name: "Acme Corp", type: "company", score: 1 });
  });

  it("context: an expired entity is left out of explicit state but can still be looked up", () => {
    const context = assembleContext({ entities: ENTITIES, turns: [], lookups: ["Initech"], now: NOW });
    expect(context.explicit.entities.some((e) => e.id === "ent_initech")).toBe(false);
    expect(context.lookups[0]?.matches.map((m) => m.id)).toEqual(["ent_initech"]);
  });

  it("context: lookups search every entity the thread has seen, including ones cleared earlier", () => {
    const cleared = entity("ent_hooli", "Hooli", 40);
    const context = assembleContext({ entities: ENTITIES, seen: [...ENTITIES, cleared], turns: [], lookups: ["hooli"], now: NOW });
    expect(context.lookups[0]?.matches.map((m) => m.id)).toEqual(["ent_hooli"]);
    expect(context.expired).not.toContain("ent_hooli");
  });

  it("context: the window, the number of turns and the lookup limit are configurable", () => {
    const context = assembleContext({
      entities: ENTITIES,
      turns,
      lookups: ["acme"],
      now: NOW,
      inactivityWindowMs: 2.5 * HOUR,
      recentTurns: 1,
      lookupLimit: 1,
    });
    expect(context.explicit.entities.map((e) => e.id)).toEqual(["ent_acme", "ent_globex"]);
    expect(context.expired).toEqual(["ent_initech", "ent_widgets", "ent_sg"]);
    expect(context.recentToolOutputs.map((t) => t.requestId)).toEqual(["req_5"]);
    expect(context.lookups[0]?.matches).toHaveLength(1);
  });

  it("context: sizeBytes is the UTF-8 size of the context's JSON without sizeBytes", () => {
    const { sizeBytes, ...rest } = assembleContext({ entities: ENTITIES, turns, lookups: ["acme"], now: NOW });
    expect(sizeBytes).toBe(jsonSize(rest));
    expect(sizeBytes).toBe(Buffer.byteLength(JSON.stringify(rest), "utf8"));
  });

  it("context: nothing to assemble gives an empty context", () => {
    const context = assembleContext({ entities: [], turns: [], now: NOW });
    expect(context).toEqual({
      explicit: { entities: [] },
      expired: [],
      recentToolOutputs: [],
      lookups: [],
      sizeBytes: jsonSize({ explicit: { entities: [] }, expired: [], recentToolOutputs: [], lookups: [] }),
    });
  });
});
