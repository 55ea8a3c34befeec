#!/usr/bin/env bash
# npm test: unit tests, integration tests on the embedded database, again on
# PostgreSQL when TEST_DATABASE_URL is set, then the browser tests against the
# built server.
set -euo pipefail
cd "$(dirname "$0")/.."
export NEXT_TELEMETRY_DISABLED=1
mkdir -p test-results

echo "== type check"
npx tsc --noEmit -p .

echo "== unit tests"
npx vitest run --project unit

# The login throttle's tests count what concurrent guesses get through within
# its time window, so they run alone, after the files that run two at a time.
ALONE=test/security-http.test.ts

echo "== integration tests (embedded PGlite)"
TOLLGATE_TEST_TARGET=embedded npx vitest run --project integration --exclude "$ALONE"
TOLLGATE_TEST_TARGET=embedded npx vitest run --project integration "$ALONE"

if [ -n "${TEST_DATABASE_URL:-}" ]; then
  echo "== integration tests (PostgreSQL)"
  # The framework adapters and the packed SDK talk to the server over HTTP and
  # do not depend on its database: they run once, on the embedded one.
  TOLLGATE_TEST_TARGET=postgres npx vitest run --project integration \
    --exclude 'test/adapter-*.test.ts' --exclude test/sdk-package.test.ts --exclude "$ALONE" \
    --reporter=default --reporter=json --outputFile.json=test-results/integration-postgres.json
  TOLLGATE_TEST_TARGET=postgres npx vitest run --project integration "$ALONE"
else
  echo "== integration tests (PostgreSQL): skipped, TEST_DATABASE_URL is not set"
fi

echo "== browser tests (Playwright, Chromium)"
npm run build
npx playwright test
