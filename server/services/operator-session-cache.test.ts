import { describe, expect, it } from "vitest";
import type { OperatorPrincipal } from "../domain/principal.ts";
import { OperatorSessionCache } from "./operator-session-cache.ts";

const at = (ms: number) => new Date(Date.UTC(2026, 10, 25) + ms);
const principal = (sessionId: string, operatorId: string, expiresAt = at(60_000)): OperatorPrincipal => ({
  kind: "operator",
  workspaceId: "ws_1",
  operatorId,
  sessionId,
  expiresAt,
  email: `${operatorId}@example.com`,
  name: operatorId,
  role: "OPERATOR",
});

describe("the operator session cache", () => {
  it("remembers a session for five seconds, and never past the session's own expiry", () => {
    const cache = new OperatorSessionCache();
    cache.remember("long", principal("s1", "op_a"), cache.generation(), at(0));
    cache.remember("short", principal("s2", "op_a", at(1_000)), cache.generation(), at(0));
    expect(cache.get("long", at(4_999))?.sessionId).toBe("s1");
    expect(cache.get("short", at(999))?.sessionId).toBe("s2");
    expect(cache.get("short", at(1_000))).toBeUndefined();
    expect(cache.get("long", at(5_000))).toBeUndefined();
  });

  it("forgets an ended session, and every session of a changed operator", () => {
    const cache = new OperatorSessionCache();
    for (const [hash, session, operator] of [["h1", "s1", "op_a"], ["h2", "s2", "op_a"], ["h3", "s3", "op_b"]] as const) {
      cache.remember(hash, principal(session, operator), cache.generation(), at(0));
    }
    cache.forgetSession("s3");
    expect(cache.get("h3", at(1))).toBeUndefined();
    expect(cache.get("h1", at(1))).toBeDefined();
    cache.forgetOperator("op_a");
    expect([cache.get("h1", at(1)), cache.get("h2", at(1))]).toEqual([undefined, undefined]);
  });

  it("does not remember a session read before a change whose event arrived while the read was under way", () => {
    const cache = new OperatorSessionCache();
    const readStarted = cache.generation();
    cache.forgetOperator("op_a"); // the demotion's event, heard while the old row was being read
    cache.remember("h1", principal("s1", "op_a"), readStarted, at(0));
    expect(cache.get("h1", at(1))).toBeUndefined();
  });
});
