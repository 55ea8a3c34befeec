// The embedded database holds its memory for the server's life, so it is kept
// small: the page cache it is configured with (TOLLGATE_EMBEDDED_CACHE_MB), not
// PostgreSQL's default of 128 MB; a statistics target of 10, not 100 (an
// ANALYZE's sample stays in that memory); and a new folder's database created
// in a child process, whose memory ends with it.
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, pgliteOptions, type Database } from "../server/db/client.ts";
import { createEmbeddedDatabase, holdsEmbeddedDatabase } from "../server/db/embedded-folder.ts";

const newFolder = () => mkdtemp(path.join(tmpdir(), "tollgate-embedded-"));

describe("embedded database", () => {
  // One database opened with an 8 MB page cache answers both settings' tests:
  // creating one in memory runs initdb in this process, seconds of one core each.
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({ dataDir: "memory://", embeddedCacheMb: 8, migrate: false });
  });
  afterAll(() => database?.close());

  const setting = async (name: "shared_buffers" | "default_statistics_target") => {
    const [row] = await database.prisma.$queryRawUnsafe<{ setting: string }[]>(`SELECT current_setting('${name}') AS setting`);
    return row!.setting;
  };

  it("embedded database: its shared_buffers are the configured page cache", async () => {
    expect(await setting("shared_buffers")).toBe("8MB");
  });

  it("embedded database: ANALYZE samples rows for a statistics target of 10, not PostgreSQL's 100", async () => {
    expect(await setting("default_statistics_target")).toBe("10");
  });

  it("embedded database: a new folder's database is created outside this process, which opens it afterwards", async () => {
    const dataDir = await newFolder();
    const externalBefore = process.memoryUsage().external;
    await createEmbeddedDatabase(dataDir, pgliteOptions(8).startParams);
    // Created here, PGlite's two instances and their WebAssembly memory (over 500 MB) would stay with this process.
    expect(process.memoryUsage().external - externalBefore).toBeLessThan(64 * 2 ** 20);
    expect(await holdsEmbeddedDatabase(dataDir)).toBe(true);

    const database = await openDatabase({ dataDir, embeddedCacheMb: 8, migrate: false });
    try {
      const [row] = await database.prisma.$queryRaw<{ answer: number }[]>`SELECT 42 AS answer`;
      expect(row!.answer).toBe(42);
    } finally {
      await database.close();
    }
  });

  it("embedded database: a folder it cannot create a database in stops the start with a line naming the folder", async () => {
    const dataDir = await newFolder();
    await writeFile(path.join(dataDir, "global"), "a file where PostgreSQL keeps a folder");
    await expect(createEmbeddedDatabase(dataDir, [])).rejects.toThrow(`could not create the embedded database in ${dataDir}: PGlite's file system failed`);
    expect(await holdsEmbeddedDatabase(dataDir)).toBe(false);
  });
});
