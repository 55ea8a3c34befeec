#!/usr/bin/env bash
# npm test: the type check, the unit tests, the integration tests on the
# embedded database and again on PostgreSQL (when TEST_DATABASE_URL is set),
# the build, then the browser tests against the built server.
# `npm run test:long` (this script with --long) runs the long scenarios instead.
#
# Stages run side by side where they can: the two integration passes mostly
# wait (on their servers, sockets and PostgreSQL), the type check and the build
# mostly compute. Each stage writes test-results/logs/<stage>.log, printed whole
# when the stage ends, with its time; the run fails if any stage failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export NEXT_TELEMETRY_DISABLED=1
LOGS=test-results/logs
mkdir -p "$LOGS"

# The login throttle's tests count what guesses get through within its
# one-second window, so they run alone, after the files that run side by side.
ALONE=test/security-http.test.ts

declare -A pid started
failed=()
run_started=$SECONDS

# stage NAME COMMAND...: starts COMMAND in the background, its output to the stage's log.
stage() {
  local name=$1
  shift
  started[$name]=$SECONDS
  "$@" >"$LOGS/$name.log" 2>&1 &
  pid[$name]=$!
  echo "== $name: started"
}

# finish NAME...: waits for each stage and prints its log and how it ended.
finish() {
  local name status
  for name in "$@"; do
    status=0
    wait "${pid[$name]}" || status=$?
    echo
    echo "== $name: $([ "$status" = 0 ] && echo passed || echo "FAILED (exit $status)") in $((SECONDS - started[$name])) s"
    cat "$LOGS/$name.log"
    [ "$status" = 0 ] || failed+=("$name")
  done
}

# postgres_ready: the PostgreSQL pass runs when TEST_DATABASE_URL is set.
postgres_ready() {
  if [ -n "${TEST_DATABASE_URL:-}" ]; then return 0; fi
  echo "== integration tests (PostgreSQL): skipped, TEST_DATABASE_URL is not set (README, \"Test it\")"
  return 1
}

summary() {
  echo
  if [ "${#failed[@]}" -gt 0 ]; then
    echo "== FAILED: ${failed[*]} (logs in $LOGS/), after $((SECONDS - run_started)) s"
    exit 1
  fi
  echo "== all stages passed in $((SECONDS - run_started)) s"
}

checks() {
  echo "-- type check"
  npx tsc --noEmit -p . || return 1
  echo "-- unit tests"
  npx vitest run --project unit
}

build() {
  npm run build
}

integration_embedded() {
  TOLLGATE_TEST_TARGET=embedded npx vitest run --project integration --exclude "$ALONE"
}

integration_postgres() {
  # The framework adapters and the packed SDK talk to the server over HTTP and
  # do not depend on its database: they run once, on the embedded one.
  TOLLGATE_TEST_TARGET=postgres npx vitest run --project integration \
    --exclude 'test/adapter-*.test.ts' --exclude test/sdk-package.test.ts --exclude "$ALONE" \
    --reporter=default --reporter=json --outputFile.json=test-results/integration-postgres.json
}

alone() {
  TOLLGATE_TEST_TARGET=embedded npx vitest run --project integration "$ALONE" || return 1
  if [ -n "${TEST_DATABASE_URL:-}" ]; then TOLLGATE_TEST_TARGET=postgres npx vitest run --project integration "$ALONE"; fi
}

browser() {
  npx playwright test
}

long() {
  TOLLGATE_TEST_TARGET=embedded npx vitest run --project long || return 1
  if [ -n "${TEST_DATABASE_URL:-}" ]; then
    TOLLGATE_TEST_TARGET=postgres npx vitest run --project long \
      --reporter=default --reporter=json --outputFile.json=test-results/long-postgres.json
  fi
}

if [ "${1:-}" = "--long" ]; then
  postgres_ready || true
  stage long long
  finish long
  summary
  exit 0
fi

stage checks checks
stage build build
stage integration-embedded integration_embedded
if postgres_ready; then stage integration-postgres integration_postgres; fi
finish integration-embedded
if [ -n "${pid[integration-postgres]:-}" ]; then finish integration-postgres; fi
finish checks build
# Then alone, in this order: the throttle's tests, then the browser tests (which
# need the build).
stage alone alone
finish alone
if [[ " ${failed[*]} " == *" build "* ]]; then
  echo "== browser tests: not run, the build failed"
else
  stage browser browser
  finish browser
fi
summary
