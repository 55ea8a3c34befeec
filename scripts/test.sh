#!/usr/bin/env bash
# npm test: the type check, the unit tests, the integration tests on the
# embedded database and again on PostgreSQL (when TEST_DATABASE_URL is set; the
# files listed in ONCE below run on the embedded one only), the build, and the
# browser tests against the built server.
# `npm run test:long` (this script with --long) runs the long scenarios, and
# the ONCE files on PostgreSQL, instead.
#
# Stages run side by side: the two integration passes mostly wait (on their
# servers, sockets and PostgreSQL), the type check and the build mostly
# compute, and the browser tests start when the build is done. Each stage
# writes test-results/logs/<stage>.log, printed whole when the stage ends, with
# its time and CPU seconds; the run fails if any stage failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export NEXT_TELEMETRY_DISABLED=1
LOGS=test-results/logs
mkdir -p "$LOGS"

# Integration files that run on one database in `npm test`: they check what a
# client, a framework or the transport does over HTTP (the adapters, the
# packed SDK, the Python client, the MCP gateway, agent processes killed
# mid-run, tracing, outbound checks, the wire contract, the login throttle,
# the security headers and the documentation's shell examples), and nothing of
# theirs depends on which database holds the rows. `npm test` runs them on the
# embedded database; `npm run test:long` runs them on PostgreSQL too, so CI
# still runs every file on both (those in EMBEDDED_ONLY excepted: they never
# touch the server's database and run on the embedded one only). Everything that reaches the SQL
# functions, the locks, races, LISTEN/NOTIFY or several nodes runs on both in
# `npm test`.
ONCE=(
  test/durable-ai-sdk.test.ts test/durable-claude-agent.test.ts test/durable-langchain.test.ts test/durable-langgraph.test.ts test/durable-openai-agents.test.ts
  test/python-client.test.ts test/readme-example.test.ts test/mcp-gateway.test.ts
  test/tracing.test.ts test/outbound-http.test.ts test/http.test.ts
  test/security-http.test.ts test/review-risk.test.ts test/thread-state-http.test.ts
  test/docs-examples.test.ts test/fuzz.test.ts test/redis-channel.test.ts
)
# Of those, the files that run in the PostgreSQL pass instead when there is one
# (and on the embedded database in test:long): the embedded pass is the longer
# of the two, and these do not depend on which database the server has.
# The fuzzer is among them: `npm run test:long` runs it with its full number of
# cases on both databases.
ONCE_ON_POSTGRES=(
  test/mcp-gateway.test.ts test/security-http.test.ts test/fuzz.test.ts
  test/durable-langgraph.test.ts test/durable-openai-agents.test.ts test/durable-ai-sdk.test.ts test/durable-claude-agent.test.ts
)
ONCE_ON_EMBEDDED=()
for file in "${ONCE[@]}"; do
  [[ " ${ONCE_ON_POSTGRES[*]} " == *" $file "* ]] || ONCE_ON_EMBEDDED+=("$file")
done
# Files that never reach the target database: the framework adapters, the
# packed SDK, the documentation's links, and the embedded database's own
# settings and folder (it makes its own embedded databases whatever the target).
EMBEDDED_ONLY=('test/adapter-*.test.ts' test/sdk-package.test.ts test/docs-links.test.ts test/embedded-database.test.ts)

declare -A pid started
failed=()
run_started=$SECONDS

# stage NAME COMMAND...: starts COMMAND in the background, its output to the stage's log,
# and the CPU seconds its processes used (user and system, from `times`) to LOGS/NAME.cpu.
stage() {
  local name=$1
  shift
  started[$name]=$SECONDS
  (
    status=0
    "$@" || status=$?
    # Not `times | ...`: the pipeline's own subshell has no children to count.
    times >"$LOGS/$name.cpu"
    awk 'END { split($1, u, "m"); split($2, s, "m"); printf "%.0f s user, %.0f s system\n", u[1] * 60 + u[2], s[1] * 60 + s[2] }' "$LOGS/$name.cpu" >"$LOGS/$name.cpu.tmp"
    mv "$LOGS/$name.cpu.tmp" "$LOGS/$name.cpu"
    exit $status
  ) >"$LOGS/$name.log" 2>&1 &
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
    echo "== $name: $([ "$status" = 0 ] && echo passed || echo "FAILED (exit $status)") in $((SECONDS - started[$name])) s ($(cat "$LOGS/$name.cpu" 2>/dev/null || echo "CPU time unknown"))"
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
  npx vitest run --project unit --reporter=default --reporter=json --outputFile.json=test-results/unit.json
}

build() {
  npm run build
}

# The embedded template, and PostgreSQL's when the PostgreSQL pass runs (test/make-templates.ts).
templates() {
  local target=embedded
  if [ -n "${TEST_DATABASE_URL:-}" ]; then target=postgres; fi
  TOLLGATE_TEST_TARGET=$target node --import tsx test/make-templates.ts
}

# --exclude once per file: vitest takes one pattern per flag.
excluding() { local file; for file in "$@"; do printf -- '--exclude\n%s\n' "$file"; done; }

integration_embedded() {
  local excludes=()
  if [ -n "${TEST_DATABASE_URL:-}" ]; then mapfile -t excludes < <(excluding "${ONCE_ON_POSTGRES[@]}"); fi
  TOLLGATE_TEST_TARGET=embedded npx vitest run --project integration "${excludes[@]}" \
    --reporter=default --reporter=json --outputFile.json=test-results/integration-embedded.json
}

integration_postgres() {
  local excludes
  mapfile -t excludes < <(excluding "${EMBEDDED_ONLY[@]}" "${ONCE_ON_EMBEDDED[@]}")
  TOLLGATE_TEST_TARGET=postgres npx vitest run --project integration "${excludes[@]}" \
    --reporter=default --reporter=json --outputFile.json=test-results/integration-postgres.json
}

browser() {
  # The server's log lines carry their times: this one says when it was started.
  echo "browser tests: starting the server at $(date -u +%H:%M:%S)"
  npx playwright test
}

long_embedded() {
  TOLLGATE_TEST_TARGET=embedded npx vitest run --project long || return 1
  # npm test ran these on PostgreSQL when it could (the fuzzer has just run, with all its cases).
  local file once=()
  for file in "${ONCE_ON_POSTGRES[@]}"; do [ "$file" = test/fuzz.test.ts ] || once+=("$file"); done
  if [ -n "${TEST_DATABASE_URL:-}" ]; then TOLLGATE_TEST_TARGET=embedded npx vitest run --project integration "${once[@]}"; fi
}

# The long scenarios on PostgreSQL, and the files `npm test` runs on the embedded database only.
long_postgres() {
  TOLLGATE_TEST_TARGET=postgres npx vitest run --project long \
    --reporter=default --reporter=json --outputFile.json=test-results/long-postgres.json || return 1
  TOLLGATE_TEST_TARGET=postgres npx vitest run --project integration "${ONCE_ON_EMBEDDED[@]}" \
    --reporter=default --reporter=json --outputFile.json=test-results/once-postgres.json
}

if [ "${1:-}" = "--long" ]; then
  # Side by side: the passes mostly wait on their servers and databases.
  stage long-embedded long_embedded
  if postgres_ready; then stage long-postgres long_postgres; fi
  finish long-embedded
  if [ -n "${pid[long-postgres]:-}" ]; then finish long-postgres; fi
  summary
  exit 0
fi

stage build build
# The migrated template databases the test files copy, made once here before the
# passes start: each pass's global setup (and the unit tests') would otherwise
# make the same embedded one side by side, about 19 CPU-seconds each.
templates_started=$SECONDS
if templates >"$LOGS/templates.log" 2>&1; then
  echo "== template databases: made in $((SECONDS - templates_started)) s"
else
  echo "== template databases: FAILED"
  cat "$LOGS/templates.log"
  failed+=(templates)
fi
stage checks checks
stage integration-embedded integration_embedded
if postgres_ready; then stage integration-postgres integration_postgres; fi
# The browser tests start as soon as the build is there, beside the integration
# passes (which mostly wait), rather than after them.
finish build
if [[ " ${failed[*]} " == *" build "* ]]; then
  echo "== browser tests: not run, the build failed"
else
  stage browser browser
fi
finish checks integration-embedded
if [ -n "${pid[integration-postgres]:-}" ]; then finish integration-postgres; fi
if [ -n "${pid[browser]:-}" ]; then finish browser; fi
summary
