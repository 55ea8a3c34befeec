// Browser tests against the built server (npm run build first): one server process
// on a free port with a fresh embedded database, driven by Debian's Chromium.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig, devices } from "@playwright/test";
import { ADMIN_EMAIL, ADMIN_PASSWORD, AGENT_KEY, BASE_URL, E2E_PORT } from "./e2e/fixtures";

// Playwright loads this file in the runner and again in every worker. Workers inherit
// the runner's environment, so only the runner creates (and later removes) the folder.
let dataDir = process.env.TOLLGATE_E2E_DATA_DIR;
if (!dataDir) {
  const created = mkdtempSync(join(tmpdir(), "tollgate-e2e-"));
  dataDir = created;
  process.env.TOLLGATE_E2E_DATA_DIR = created;
  // The web server is stopped before the runner exits.
  process.on("exit", () => rmSync(created, { recursive: true, force: true }));
}

/** Debian's Chromium (package chromium). */
const CHROMIUM_PATH = process.env.TOLLGATE_E2E_CHROMIUM ?? "/usr/bin/chromium";
/**
 * Debian's headless shell (package chromium-headless-shell): the same Blink without the
 * desktop browser around it, as Playwright's own headless runs use. The review and inbox
 * specs took 188 CPU-seconds in it, 256 in the full browser (on an idle 2-core machine,
 * counting every process), and the browser tests' Chromium processes were a quarter of all
 * the CPU `npm test` used. Without the package, the full browser runs every test.
 */
const HEADLESS_SHELL_PATH = process.env.TOLLGATE_E2E_HEADLESS_SHELL ?? "/usr/bin/chromium-headless-shell";

/** Chromium at a laptop's screen size: what the console is judged at. */
const browserAt = (executablePath: string) => ({
  ...devices["Desktop Chrome"],
  viewport: { width: 1280, height: 800 },
  launchOptions: {
    executablePath,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  },
});
const headless = browserAt(existsSync(HEADLESS_SHELL_PATH) ? HEADLESS_SHELL_PATH : CHROMIUM_PATH);

/** Tests of what only the full browser has (desktop notifications): tagged, and run in it. */
const FULL_BROWSER = /@full-browser/;

/** Files whose tests change settings every approval of the workspace meets. */
const WORKSPACE_WIDE = ["**/notifications.spec.ts", "**/policies.spec.ts", "**/scale.spec.ts"];

export default defineConfig({
  testDir: "e2e",
  // Not the default test-results/: Playwright empties its output folder on start, and
  // npm test writes the vitest reports (test-results/*.json) there before this runs.
  outputDir: "test-results/e2e",
  // Each file's tests in order, in one browser; files side by side in
  // TOLLGATE_E2E_WORKERS workers (npm test, which runs these after the
  // integration passes, sets three), else two with four cores or more and one
  // below. The files that change what the whole workspace does run first, one
  // at a time.
  fullyParallel: false,
  workers: Number(process.env.TOLLGATE_E2E_WORKERS ?? (availableParallelism() >= 4 ? 2 : 1)),
  forbidOnly: !!process.env.CI,
  retries: process.env.CI ? 1 : 0,
  // A guard against a hang: on a busy 2-core machine a test of two operators'
  // sessions has taken over 30 s, though each step waits far less.
  timeout: 90_000,
  expect: { timeout: 10_000 },
  reporter: [["list"], ["html", { open: "never", outputFolder: "playwright-report" }]],
  use: {
    baseURL: BASE_URL,
    // Every test keeps a screenshot of its final screen (test-results/e2e/<test>/test-finished-1.png).
    screenshot: "on",
    // Recorded on a failed test's retry (CI retries once), not for every test: a trace
    // records the screen as it goes, a quarter of the browser tests' CPU (review and
    // inbox specs: 119 and 109 CPU-seconds recording every test, 89 and 77 not).
    trace: "on-first-retry",
  },
  projects: [
    {
      // The workspace's default gate and routing, its notification channels, and a
      // thousand approvals at once: the tests beside them would meet those.
      name: "workspace-wide",
      testMatch: WORKSPACE_WIDE,
      workers: 1,
      use: headless,
    },
    {
      name: "chromium",
      testIgnore: WORKSPACE_WIDE,
      grepInvert: FULL_BROWSER,
      dependencies: ["workspace-wide"],
      use: headless,
    },
    {
      name: "full-browser",
      testIgnore: WORKSPACE_WIDE,
      grep: FULL_BROWSER,
      dependencies: ["workspace-wide"],
      use: browserAt(CHROMIUM_PATH),
    },
  ],
  webServer: {
    // `env -u` really removes DATABASE_URL (and REDIS_URL) that CI may have set, so the
    // server runs on its own embedded database in the fresh temporary folder.
    command: "env -u DATABASE_URL -u REDIS_URL node dist/server.mjs",
    url: `${BASE_URL}/healthz`,
    reuseExistingServer: !process.env.CI,
    // A fresh embedded database is created (initdb in a child process, then the
    // migrations): about 14 s on an idle 2-core machine, and CPU-bound, so beside
    // the integration passes at a load of 10 to 17 it has taken more than 120 s.
    timeout: 360_000,
    stdout: "pipe",
    stderr: "pipe",
    env: {
      NODE_ENV: "production",
      PORT: String(E2E_PORT),
      HOST: "127.0.0.1",
      TOLLGATE_DATA_DIR: dataDir,
      TOLLGATE_ADMIN_EMAIL: ADMIN_EMAIL,
      TOLLGATE_ADMIN_PASSWORD: ADMIN_PASSWORD,
      TOLLGATE_AGENT_KEY: AGENT_KEY,
      TOLLGATE_LOG_LEVEL: "info",
      // The notification tests' webhook receiver listens on loopback.
      TOLLGATE_OUTBOUND_ALLOW: "127.0.0.1",
      // An approval nobody has asked about for 5 s is shown with no agent waiting (the test agents poll every 2 s).
      TOLLGATE_AGENT_LIVENESS_SECONDS: "5",
      NEXT_TELEMETRY_DISABLED: "1",
    },
  },
});
