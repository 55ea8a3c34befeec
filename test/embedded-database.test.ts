// The embedded database is opened with the page cache it is configured with
// (TOLLGATE_EMBEDDED_CACHE_MB), not PostgreSQL's default of 128 MB, which
// PGlite would hold in the server's memory from the start.
import { describe, expect, it } from "vitest";
import { openDatabase } from "../server/db/client.ts";

describe("embedded database", () => {
  it("embedded database: its shared_buffers are the configured page cache", async () => {
    const database = await openDatabase({ dataDir: "memory://", embeddedCacheMb: 8, migrate: false });
    try {
      const [setting] = await database.prisma.$queryRaw<{ shared_buffers: string }[]>`SHOW shared_buffers`;
      expect(setting!.shared_buffers).toBe("8MB");
    } finally {
      await database.close();
    }
  });
});
