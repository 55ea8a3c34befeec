// Known values the browser tests share with playwright.config.ts, which starts the
// server with them. Test-only credentials for a throwaway database; never reuse them.
import { execFileSync } from "node:child_process";

/**
 * The server's port: TOLLGATE_E2E_PORT, else a free one, picked once by the
 * runner (which loads this first) and left in the environment its workers
 * inherit, so two checkouts run their browser tests side by side.
 */
function e2ePort(): number {
  if (!process.env.TOLLGATE_E2E_PORT) {
    // Synchronous, as Playwright reads its configuration: a child process asks the system for a free port.
    const probe = "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })";
    process.env.TOLLGATE_E2E_PORT = execFileSync(process.execPath, ["--eval", probe], { encoding: "utf8" }).trim();
    console.log(`browser tests: the server listens on port ${process.env.TOLLGATE_E2E_PORT} (set TOLLGATE_E2E_PORT to choose)`);
  }
  return Number(process.env.TOLLGATE_E2E_PORT);
}

export const E2E_PORT = e2ePort();
export const BASE_URL = `http://127.0.0.1:${E2E_PORT}`;

export const ADMIN_EMAIL = "admin@example.com";
export const ADMIN_PASSWORD = "e2e-admin-password";
/** What the console shows for the bootstrap admin (data-testid="operator-identity"). */
export const ADMIN_IDENTITY = "Administrator (admin)";

/** The bootstrap agent key (TOLLGATE_AGENT_KEY, at least 16 characters). */
export const AGENT_KEY = "e2e-agent-key-0123456789abcdef";
