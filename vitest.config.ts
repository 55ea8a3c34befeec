import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import { SlowFilesFirst } from "./test/slow-files-first.ts";

/** Scenarios too slow for every change: `npm run test:long` runs them (README, "Test it"). */
const LONG = ["test/long/*.test.ts"];

/** What the integration files share, in `npm test` and in `npm run test:long`. */
const integration: NonNullable<TestProjectInlineConfiguration["test"]> = {
  environment: "node",
  // A guard against a hang, not a measure: files run side by side with the
  // browser tests on two cores, where a slow step is not a failure.
  testTimeout: 180_000,
  hookTimeout: 120_000,
  // Migrated template databases, made once, copied for each file (test/templates.ts).
  globalSetup: ["test/global-setup.ts"],
  // Each file gets its own database; PGlite runs on the main thread of
  // its worker, so files run in separate processes.
  pool: "forks",
  // A worker runs its files one after another on the modules it has already
  // loaded: loading the server's modules again for each file cost about as
  // much CPU as the tests themselves (10 files: 182 CPU-seconds isolated, 96
  // not). Each file still starts its own servers and databases, and a file
  // that replaces a function (vi.spyOn) restores it before it ends.
  isolate: false,
  fileParallelism: true,
  // The files mostly wait (on their servers, sockets and PostgreSQL), so
  // two run at once even on 2 cores, where vitest's default (one fewer
  // than the cores) would run them one by one: a third less time there.
  maxWorkers: Math.max(2, availableParallelism() - 1),
};

export default defineConfig({
  test: {
    // The integration files of a minute or more start first, so a pass does not end on
    // one of them (vitest reads the sequencer from the root configuration only).
    sequence: { sequencer: SlowFilesFirst },
    projects: [
      {
        // The console's "@/..." imports, for tests of its pure logic.
        resolve: { alias: { "@": fileURLToPath(new URL(".", import.meta.url)) } },
        test: {
          name: "unit",
          include: ["server/**/*.test.ts", "sdk/**/*.test.ts", "components/**/*.test.ts", "lib/**/*.test.ts"],
          environment: "node",
          // As in the integration files, a worker keeps its loaded modules from
          // one file to the next (53 CPU-seconds isolated, 24 not).
          isolate: false,
          // A few of these start an embedded database, whose first start
          // compiles PostgreSQL's WebAssembly: slow on a busy 2-core machine.
          hookTimeout: 60_000,
          // Those copy the migrated template (test/templates.ts), made here once.
          globalSetup: ["test/global-setup.ts"],
        },
      },
      {
        // Not test/long/: a project's own exclude would replace the files the command line excludes.
        test: { ...integration, name: "integration", include: ["test/*.test.ts"] },
      },
      {
        // The long scenarios, and the fuzzer with its full number of cases. The
        // limit is a guard against a hang: the full fuzz run on both databases at
        // once passed 600 s on a 2-core machine that another test run shared.
        test: { ...integration, name: "long", include: [...LONG, "test/fuzz.test.ts"], env: { TOLLGATE_LONG_TESTS: "1" }, testTimeout: 1_200_000 },
      },
    ],
  },
});
