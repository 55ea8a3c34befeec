import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { deriveKey, resolveServerSecret, SECRET_FILE } from "./secret.ts";
import { setLogLevel } from "./log.ts";

setLogLevel("warn");
const folders: string[] = [];
const newFolder = async () => {
  const folder = await mkdtemp(path.join(tmpdir(), "tollgate-secret-"));
  folders.push(folder);
  return folder;
};
afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

describe("server secret", () => {
  it("secret: TOLLGATE_SECRET wins and nothing is written", async () => {
    const dataDir = await newFolder();
    const configured = "x".repeat(40);
    expect(await resolveServerSecret({ configured, dataDir })).toBe(configured);
    await expect(stat(path.join(dataDir, SECRET_FILE))).rejects.toThrow(/ENOENT/);
  });

  it("secret: unset, one is generated into secret.key (mode 0600, folder created) and kept across starts", async () => {
    const dataDir = path.join(await newFolder(), "not", "yet");
    const first = await resolveServerSecret({ dataDir });
    expect(first.length).toBeGreaterThanOrEqual(32);
    const file = path.join(dataDir, SECRET_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, "utf8")).trim()).toBe(first);
    expect(await resolveServerSecret({ dataDir })).toBe(first);
  });

  it("secret: two starts at once on one folder agree on one secret", async () => {
    const dataDir = await newFolder();
    const [a, b] = await Promise.all([resolveServerSecret({ dataDir }), resolveServerSecret({ dataDir })]);
    expect(a).toBe(b);
  });

  it("secret: a secret.key too short to use stops the start, saying what to do", async () => {
    const dataDir = await newFolder();
    await writeFile(path.join(dataDir, SECRET_FILE), "short\n");
    await expect(resolveServerSecret({ dataDir })).rejects.toThrow(/restore it from a backup, or set TOLLGATE_SECRET/);
  });

  it("secret: an in-memory data folder gets an in-memory secret", async () => {
    expect((await resolveServerSecret({ dataDir: "memory://" })).length).toBeGreaterThanOrEqual(32);
  });

  it("secret: keys derived for different purposes differ", () => {
    const secret = "y".repeat(32);
    expect(deriveKey(secret, "a")).toHaveLength(32);
    expect(deriveKey(secret, "a").equals(deriveKey(secret, "a"))).toBe(true);
    expect(deriveKey(secret, "a").equals(deriveKey(secret, "b"))).toBe(false);
  });
});
