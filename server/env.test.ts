import { describe, expect, it } from "vitest";
import { parseEnv } from "./env.ts";

describe("configuration", () => {
  it("env: defaults apply when nothing is set", () => {
    const env = parseEnv({});
    expect(env.PORT).toBe(3000);
    expect(env.TOLLGATE_DATA_DIR).toBe("./.data");
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env.TOLLGATE_EMBEDDED_CACHE_MB).toBe(16);
    expect(env.TOLLGATE_TRIM_IDLE_MEMORY).toBe("on");
  });

  it.each([
    [{ PORT: "eighty" }, /PORT="eighty"/],
    [{ PORT: "70000" }, /PORT/],
    [{ DATABASE_URL: "mysql://x" }, /DATABASE_URL="mysql:\/\/x": must be a postgres/],
    [{ REDIS_URL: "http://x" }, /REDIS_URL.*redis:\/\//],
    [{ TOLLGATE_ADMIN_EMAIL: "not-an-email" }, /TOLLGATE_ADMIN_EMAIL/],
    [{ TOLLGATE_ADMIN_PASSWORD: "short" }, /TOLLGATE_ADMIN_PASSWORD=\(hidden\): must be at least 8/],
    [{ TOLLGATE_AGENT_KEY: "short" }, /TOLLGATE_AGENT_KEY=\(hidden\)/],
    [{ TOLLGATE_SECRET: "too short" }, /TOLLGATE_SECRET=\(hidden\): must be at least 32 characters/],
    [{ TOLLGATE_PUBLIC_URL: "ftp://x" }, /TOLLGATE_PUBLIC_URL="ftp:\/\/x": must be an http/],
    [{ TOLLGATE_RECEIPT_TTL_SECONDS: "0" }, /TOLLGATE_RECEIPT_TTL_SECONDS/],
    [{ TOLLGATE_EMBEDDED_CACHE_MB: "0" }, /TOLLGATE_EMBEDDED_CACHE_MB="0"/],
    [{ TOLLGATE_EMBEDDED_CACHE_MB: "lots" }, /TOLLGATE_EMBEDDED_CACHE_MB="lots"/],
    [{ TOLLGATE_EMBEDDED_CACHE_MB: "2500" }, /TOLLGATE_EMBEDDED_CACHE_MB="2500": must be at most 1024/],
    [{ TOLLGATE_TRUST_PROXY: "yes" }, /TOLLGATE_TRUST_PROXY="yes": must be "true" or "false"/],
    [{ TOLLGATE_TRIM_IDLE_MEMORY: "true" }, /TOLLGATE_TRIM_IDLE_MEMORY="true": must be "on" or "off"/],
    [{ TOLLGATE_CACHES_OFF: "gate-facts,gate-fact" }, /TOLLGATE_CACHES_OFF="gate-facts,gate-fact": names no cache: gate-fact \(the caches: gate-facts, /],
  ])("env: a bad value stops the start with one line naming the variable (%o)", (source, message) => {
    expect(() => parseEnv(source)).toThrow(message);
  });

  it("env: every hot-path cache is on unless TOLLGATE_CACHES_OFF names it", () => {
    expect(parseEnv({}).TOLLGATE_CACHES_OFF).toEqual(new Set());
    expect(parseEnv({ TOLLGATE_CACHES_OFF: " gate-facts, policies " }).TOLLGATE_CACHES_OFF).toEqual(new Set(["gate-facts", "policies"]));
  });

  it("env: receipts default to a one-hour lifetime and an issuer derived from the port", () => {
    const env = parseEnv({});
    expect(env.TOLLGATE_RECEIPT_TTL_SECONDS).toBe(3600);
    expect(env.TOLLGATE_PUBLIC_URL).toBeUndefined();
    expect(env.TOLLGATE_SECRET).toBeUndefined();
  });

  it("env: the public URL loses its trailing slash, so it compares equal as an issuer", () => {
    expect(parseEnv({ TOLLGATE_PUBLIC_URL: "https://tollgate.example.com/" }).TOLLGATE_PUBLIC_URL).toBe("https://tollgate.example.com");
  });

  it("env: an empty DATABASE_URL means the embedded database", () => {
    expect(parseEnv({ DATABASE_URL: "" }).DATABASE_URL).toBeUndefined();
  });
});
