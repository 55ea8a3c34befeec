import { describe, expect, it } from "vitest";
import { parseEnv } from "./env.ts";

describe("configuration", () => {
  it("env: defaults apply when nothing is set", () => {
    const env = parseEnv({});
    expect(env.PORT).toBe(3000);
    expect(env.TOLLGATE_DATA_DIR).toBe("./.data");
    expect(env.DATABASE_URL).toBeUndefined();
  });

  it.each([
    [{ PORT: "eighty" }, /PORT="eighty"/],
    [{ PORT: "70000" }, /PORT/],
    [{ DATABASE_URL: "mysql://x" }, /DATABASE_URL="mysql:\/\/x": must be a postgres/],
    [{ REDIS_URL: "http://x" }, /REDIS_URL.*redis:\/\//],
    [{ TOLLGATE_ADMIN_EMAIL: "not-an-email" }, /TOLLGATE_ADMIN_EMAIL/],
    [{ TOLLGATE_ADMIN_PASSWORD: "short" }, /TOLLGATE_ADMIN_PASSWORD=\(hidden\): must be at least 8/],
    [{ TOLLGATE_AGENT_KEY: "short" }, /TOLLGATE_AGENT_KEY=\(hidden\)/],
  ])("env: a bad value stops the start with one line naming the variable (%o)", (source, message) => {
    expect(() => parseEnv(source)).toThrow(message);
  });

  it("env: an empty DATABASE_URL means the embedded database", () => {
    expect(parseEnv({ DATABASE_URL: "" }).DATABASE_URL).toBeUndefined();
  });
});
