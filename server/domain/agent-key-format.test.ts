import { describe, expect, it } from "vitest";
import { agentKeyPrefixOf, agentKeyShape, newAgentKey } from "./agent-key-format.ts";

describe("agent key format", () => {
  it("new keys have the prefix, 30 random base62 characters and a checksum that matches", () => {
    const keys = Array.from({ length: 200 }, newAgentKey);
    for (const key of keys) {
      expect(key).toMatch(/^tgk_[0-9A-Za-z]{30}_[0-9A-Za-z]{6}$/);
      expect(agentKeyShape(key)).toBe("valid");
    }
    expect(new Set(keys).size).toBe(keys.length);
    expect(agentKeyPrefixOf(keys[0]!)).toBe(keys[0]!.slice(0, 10));
  });

  it("a changed character anywhere is caught by the checksum", () => {
    const key = newAgentKey();
    for (const index of [4, 20, 33, key.length - 1]) {
      const swapped = key[index] === "a" ? "b" : "a";
      expect(agentKeyShape(key.slice(0, index) + swapped + key.slice(index + 1))).toBe("corrupt");
    }
  });

  it("other strings (older keys, configured ones) are left to the lookup", () => {
    for (const key of ["tgk_ZDnpfHlw5Lekmjc8DjqO9sK3b4038Ny_", "tgk_demo_agent_key_for_local_use", "e2e-agent-key-0123456789abcdef", ""]) {
      expect(agentKeyShape(key)).toBe("other");
    }
  });
});
