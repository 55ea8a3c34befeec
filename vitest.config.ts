import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["server/**/*.test.ts", "sdk/**/*.test.ts", "lib/**/*.test.ts"],
          environment: "node",
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
        },
      },
    ],
  },
});
