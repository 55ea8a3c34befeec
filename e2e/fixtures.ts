// Known values the browser tests share with playwright.config.ts, which starts the
// server with them. Test-only credentials for a throwaway database; never reuse them.
/** TOLLGATE_E2E_PORT lets two checkouts run their browser tests side by side. */
export const E2E_PORT = Number(process.env.TOLLGATE_E2E_PORT ?? 3210);
export const BASE_URL = `http://127.0.0.1:${E2E_PORT}`;

export const ADMIN_EMAIL = "admin@example.com";
export const ADMIN_PASSWORD = "e2e-admin-password";
/** What the console shows for the bootstrap admin (data-testid="operator-identity"). */
export const ADMIN_IDENTITY = "Administrator (admin)";

/** The bootstrap agent key (TOLLGATE_AGENT_KEY, at least 16 characters). */
export const AGENT_KEY = "e2e-agent-key-0123456789abcdef";
