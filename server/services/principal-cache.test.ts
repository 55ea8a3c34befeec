import { describe, expect, it } from "vitest";
import { newPrincipalCache, type Verified } from "./principal-cache.ts";

/** A cache over a table of answers whose reads wait for `release()`; `reads` lists the hashes read. */
function cacheOver(table: Map<string, string>, kept = true) {
  let clock = Date.UTC(2026, 10, 25);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const reads: string[] = [];
  const cache = newPrincipalCache<string>({
    read: async (hash): Promise<Verified<string>> => {
      reads.push(hash);
      const answer = table.get(hash) ?? null; // read now, answered once released
      await released;
      return { principal: answer };
    },
    now: () => new Date(clock),
    kept,
  });
  return {
    cache,
    reads,
    release: () => release(),
    advance: (ms: number) => (clock += ms),
  };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("the principal cache", () => {
  it("remembers an answer, unknown keys too, for five seconds by the services' clock", async () => {
    const { cache, reads, release, advance } = cacheOver(new Map([["h1", "agent 1"]]));
    release();
    expect(await cache.fetch("h1")).toEqual({ principal: "agent 1" });
    expect(await cache.fetch("unknown")).toEqual({ principal: null });
    advance(5_000);
    await cache.fetch("h1");
    await cache.fetch("unknown");
    expect(reads).toEqual(["h1", "unknown"]);
    advance(1);
    await cache.fetch("h1");
    expect(reads).toEqual(["h1", "unknown", "h1"]);
  });

  it("calls that miss together share one read", async () => {
    const { cache, reads, release } = cacheOver(new Map([["h1", "agent 1"]]));
    const calls = [cache.fetch("h1")];
    await nextTurn();
    calls.push(cache.fetch("h1"));
    release();
    expect(await Promise.all(calls)).toEqual([{ principal: "agent 1" }, { principal: "agent 1" }]);
    expect(reads).toEqual(["h1"]);
  });

  it("a read in flight when its entry is deleted answers the calls that joined it, is not kept, and later calls read anew", async () => {
    const table = new Map([["h1", "agent 1"], ["h2", "agent 2"]]);
    const { cache, reads, release } = cacheOver(table);
    const before = [cache.fetch("h1"), cache.fetch("h2")];
    await nextTurn();
    table.set("h1", "agent 1, changed");
    table.delete("h2");
    cache.delete("h1"); // the change's event, heard while the old answers were under way
    cache.clear();
    const after = [cache.fetch("h1"), cache.fetch("h2")];
    release();
    expect(await Promise.all(before)).toEqual([{ principal: "agent 1" }, { principal: "agent 2" }]);
    expect(await Promise.all(after)).toEqual([{ principal: "agent 1, changed" }, { principal: null }]);
    expect([await cache.fetch("h1"), await cache.fetch("h2")]).toEqual([{ principal: "agent 1, changed" }, { principal: null }]);
    expect(reads).toEqual(["h1", "h2", "h1", "h2"]);
  });

  it("turned off, it keeps no answer but still shares a read in flight", async () => {
    const { cache, reads, release } = cacheOver(new Map([["h1", "agent 1"]]), false);
    const together = [cache.fetch("h1"), cache.fetch("h1")];
    release();
    await Promise.all(together);
    await cache.fetch("h1");
    expect(reads).toEqual(["h1", "h1"]);
  });
});
