import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DELEGATION_PATTERN, delegationAllows, mintDelegation } from "./delegation.ts";

const key = randomBytes(32);
const now = new Date("2026-11-28T03:00:00Z");
const target = { workspaceId: "wsp_a", requestId: "req_parent" };
const token = mintDelegation(key, { ...target, expiresAt: new Date(now.getTime() + 60_000) });

describe("delegation tokens", () => {
  it("delegation: a token allows the request it names, in its workspace, until it expires", () => {
    expect(token).toMatch(DELEGATION_PATTERN);
    expect(delegationAllows(key, token, target, now)).toBe(true);
    expect(delegationAllows(key, token, target, new Date(now.getTime() + 60_000))).toBe(false);
  });

  it.each([
    ["another request", { ...target, requestId: "req_other" }, key, token],
    ["another workspace", { ...target, workspaceId: "wsp_b" }, key, token],
    ["another server's key", target, randomBytes(32), token],
    ["a body swapped under the signature", target, key, `${mintDelegation(key, { ...target, requestId: "req_other", expiresAt: new Date(now.getTime() + 60_000) }).split(".")[0]}.${token.split(".")[1]}`],
    ["a later expiry written in", target, key, `tgd_${Buffer.from(JSON.stringify({ ws: "wsp_a", req: "req_parent", exp: 4_000_000_000 })).toString("base64url")}.${token.split(".")[1]}`],
    ["no token shape", target, key, "tgd_x"],
  ])("delegation: refused for %s", (_, claims, withKey, given) => {
    expect(delegationAllows(withKey, given, claims, now)).toBe(false);
  });
});
