#!/usr/bin/env bash
# npm test: the type check, the unit tests, the integration tests (each file on
# one database: the embedded one, or PostgreSQL when TEST_DATABASE_URL is set
# and the file is listed in ON_POSTGRES below), the build, and the browser
# tests against the built server.
# `npm run test:long` (this script with --long) runs the long scenarios, and
# each integration file again on the other database.
#
# Stages, in order: the template databases beside the build; the two
# integration passes side by side; then the type check and the unit tests
# beside the browser tests. Each stage writes test-results/logs/<stage>.log,
# printed whole when the stage ends, with its time and CPU seconds; the run
# fails if any stage failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export NEXT_TELEMETRY_DISABLED=1
LOGS=test-results/logs
mkdir -p "$LOGS"

# With PostgreSQL there (TEST_DATABASE_URL), `npm test` runs each integration
# file on one database, and `npm run test:long` runs it again on the other, so
# CI, which runs both, still runs every file on both. The two databases run the
# same SQL functions (test/sql-source.test.ts); what each can break shows in the
# files of its own pass: the HTTP and agent files on the embedded database (the
# one a single server runs by default, where every statement waits for one
# connection), the use cases' SQL and its interleavings on PostgreSQL (where
# transactions really run side by side). Without PostgreSQL, every file runs on
# the embedded database (those that need PostgreSQL say they skipped).
#
# Files that need PostgreSQL: several nodes on one database, the lock-order
# races, the LISTEN/NOTIFY transport, the database server ending connections.
POSTGRES_ONLY=(test/multi-node.test.ts test/failover.test.ts test/lock-order.test.ts test/postgres-transport.test.ts test/database-connections.test.ts)
# Files that run on PostgreSQL in `npm test`; every other file runs on the
# embedded database. A new file runs on the embedded database unless listed.
ON_POSTGRES=(
  "${POSTGRES_ONLY[@]}"
  # The use cases' statements, what they write, and their interleavings.
  test/one-round-trip.test.ts test/engine.test.ts test/thread-state.test.ts test/policies.test.ts test/authority.test.ts
  test/audit-tamper.test.ts test/isolation.test.ts test/direct-sql.test.ts test/names.test.ts test/durable-runs.test.ts
  test/notifications.test.ts test/review-truth.test.ts
  # Files that do not depend on the database, here to even out the two
  # passes: the MCP gateway's processes, the security headers and throttles
  # over HTTP, the fuzzer.
  test/mcp-gateway.test.ts test/security-http.test.ts test/fuzz.test.ts
)
# Files that run on both databases in `npm test`: what they check is each
# database's own (the SQL source against the migrations, the migrations applied).
ON_BOTH=(test/sql-source.test.ts test/migrations.test.ts)
# Files that never reach the target database, and run on the embedded one
# only: the framework adapters, the packed SDK, the documentation's links, and
# the embedded database's own settings, folder and thread.
EMBEDDED_ONLY=('test/adapter-*.test.ts' test/sdk-package.test.ts test/docs-links.test.ts test/embedded-database.test.ts test/database-thread.test.ts)
# The agent frameworks' durable runs, each agent process killed and started
# again (Claude Code twice a restart): `npm run test:long` runs them, on the
# embedded database, and `npm test` not (the integration passes took 380 s with
# them on a 2-core machine, 264 s without). What every change can break of
# durable runs stays in `npm test`: the server's side of them
# (test/durable-runs.test.ts), every adapter's pause and resume through its
# framework (test/adapter-*.test.ts), and the README's durable example killed
# with SIGKILL and started again from the packed SDK (test/sdk-package.test.ts).
LONG_ONLY=(test/durable-ai-sdk.test.ts test/durable-claude-agent.test.ts test/durable-langchain.test.ts test/durable-langgraph.test.ts test/durable-openai-agents.test.ts)

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

# The embedded template's folder, as test/make-templates.ts printed it.
embedded_template() { sed -n 's/^embedded template: //p' "$LOGS/templates.log"; }

# --exclude once per file: vitest takes one pattern per flag.
excluding() { local file; for file in "$@"; do printf -- '--exclude\n%s\n' "$file"; done; }

integration_embedded() {
  local excludes
  if [ -n "${TEST_DATABASE_URL:-}" ]; then
    mapfile -t excludes < <(excluding "${LONG_ONLY[@]}" "${ON_POSTGRES[@]}")
  else
    mapfile -t excludes < <(excluding "${LONG_ONLY[@]}")
  fi
  TOLLGATE_TEST_TARGET=embedded npx vitest run --project integration "${excludes[@]}" \
    --reporter=default --reporter=json --outputFile.json=test-results/integration-embedded.json
}

integration_postgres() {
  TOLLGATE_TEST_TARGET=postgres npx vitest run --project integration "${ON_POSTGRES[@]}" "${ON_BOTH[@]}" \
    --reporter=default --reporter=json --outputFile.json=test-results/integration-postgres.json
}

browser() {
  # The server starts on a copy of the migrated template (creating and migrating
  # a database of its own took it 15 to 20 s of one core, which every test waited for).
  local template status=0
  template=$(embedded_template)
  if [ -z "${TOLLGATE_E2E_DATA_DIR:-}" ] && [ -d "$template" ]; then
    TOLLGATE_E2E_DATA_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tollgate-e2e-XXXXXX")
    cp -R "$template/." "$TOLLGATE_E2E_DATA_DIR"
    export TOLLGATE_E2E_DATA_DIR
    trap 'rm -rf "$TOLLGATE_E2E_DATA_DIR"' EXIT
  fi
  # The server's log lines carry their times: this one says when it was started.
  echo "browser tests: starting the server at $(date -u +%H:%M:%S)"
  # Three workers: the browser tests run alone, after the integration passes,
  # and each of them mostly waits (on its page, the server, the agents' polls).
  TOLLGATE_E2E_WORKERS=${TOLLGATE_E2E_WORKERS:-3} npx playwright test || status=$?
  return $status
}

# The long scenarios on the embedded database, the agent frameworks' durable
# runs, and the files `npm test` ran on PostgreSQL.
long_embedded() {
  TOLLGATE_TEST_TARGET=embedded npx vitest run --project long || return 1
  local files=("${LONG_ONLY[@]}") excludes=()
  if [ -n "${TEST_DATABASE_URL:-}" ]; then
    # The PostgreSQL pass's files, but those that need PostgreSQL (they would
    # only skip) and the fuzzer (it has just run with all its cases).
    files+=("${ON_POSTGRES[@]}")
    mapfile -t excludes < <(excluding "${POSTGRES_ONLY[@]}" test/fuzz.test.ts)
  fi
  TOLLGATE_TEST_TARGET=embedded npx vitest run --project integration "${files[@]}" "${excludes[@]}" \
    --reporter=default --reporter=json --outputFile.json=test-results/long-integration-embedded.json
}

# The long scenarios on PostgreSQL, and the files `npm test` ran on the embedded database.
long_postgres() {
  TOLLGATE_TEST_TARGET=postgres npx vitest run --project long \
    --reporter=default --reporter=json --outputFile.json=test-results/long-postgres.json || return 1
  local excludes
  mapfile -t excludes < <(excluding "${ON_POSTGRES[@]}" "${ON_BOTH[@]}" "${EMBEDDED_ONLY[@]}" "${LONG_ONLY[@]}")
  TOLLGATE_TEST_TARGET=postgres npx vitest run --project integration "${excludes[@]}" \
    --reporter=default --reporter=json --outputFile.json=test-results/long-integration-postgres.json
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
stage integration-embedded integration_embedded
if postgres_ready; then stage integration-postgres integration_postgres; fi
finish build integration-embedded
if [ -n "${pid[integration-postgres]:-}" ]; then finish integration-postgres; fi
# The browser tests after the integration passes, with three workers, rather
# than beside them: the passes keep two cores busy on their own, and with the
# browser tests beside them every process ran slower (the same stages used half
# again the CPU side by side that they use one after another). The type check
# and the unit tests run beside the browser tests, whose server and pages leave
# a core part idle while they wait.
stage checks checks
if [[ " ${failed[*]} " == *" build "* ]]; then
  echo "== browser tests: not run, the build failed"
else
  stage browser browser
fi
finish checks
if [ -n "${pid[browser]:-}" ]; then finish browser; fi
summary
