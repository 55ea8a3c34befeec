import nodeCrypto from "node:crypto";
import { describe, expect, it } from "vitest";
import { keepNativeGlobals } from "./native-globals.ts";

describe("the process's clock and random sources with Next.js loaded", () => {
  it("are Node's own again once the server has loaded Next (its wrappers replaced them)", async () => {
    const native = { Date: globalThis.Date, random: Math.random, randomUUID: globalThis.crypto.randomUUID, randomBytes: nodeCrypto.randomBytes };
    const restore = keepNativeGlobals();
    // What `next()` loads first: it wraps Date, Math.random and crypto's random functions.
    await import("next/dist/server/node-environment.js");
    expect(globalThis.Date).not.toBe(native.Date);
    expect(nodeCrypto.randomBytes).not.toBe(native.randomBytes);

    expect(restore()).toBe(true);
    expect(globalThis.Date).toBe(native.Date);
    expect(new Date().constructor).toBe(native.Date);
    expect(Math.random).toBe(native.random);
    expect(globalThis.crypto.randomUUID).toBe(native.randomUUID);
    expect(nodeCrypto.randomBytes).toBe(native.randomBytes);
    // Nothing left to put back.
    expect(restore()).toBe(false);
    expect(new Date(0).toISOString()).toBe("1970-01-01T00:00:00.000Z");
  });
});
