import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        // The console's "@/..." imports, for tests of its pure logic.
        resolve: { alias: { "@": fileURLToPath(new URL(".", import.meta.url)) } },
        test: {
          name: "unit",
          include: ["server/**/*.test.ts", "sdk/**/*.test.ts", "components/**/*.test.ts", "lib/**/*.test.ts"],
          environment: "node",
          // A few of these start an embedded database, whose first start
          // compiles PostgreSQL's WebAssembly: slow on a busy 2-core machine.
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/**/*.test.ts"],
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Each file gets its own database; PGlite runs on the main thread of
          // its worker, so files run in separate processes.
          pool: "forks",
          fileParallelism: true,
          // The files mostly wait (on their servers, sockets and PostgreSQL), so
          // two run at once even on 2 cores, where vitest's default (one fewer
          // than the cores) would run them one by one: a third less time there.
          maxWorkers: Math.max(2, availableParallelism() - 1),
        },
      },
    ],
  },
});
