#!/usr/bin/env bash
# API fuzzing with schemathesis against the OpenAPI document the service serves at /openapi.json.
#
#   scripts/fuzz.sh                     full pass: 300 examples per operation, at least 1,000 cases
#   scripts/fuzz.sh MAX_EXAMPLES        short pass (CI: scripts/fuzz.sh 20), no minimum
#
# Environment:
#   RECALL_URL      fuzz a service already running there; otherwise the built service (dist/) is
#                   started on a free port with a throwaway DATA_DIR and stopped afterwards
#   RECALL_API_KEY  sent as `Authorization: Bearer …` (needed when the service has API_KEYS set)
#   FUZZ_SEED       fixes the random seed to replay a run
#   FUZZ_CHECKS     schemathesis checks (default: no 5xx, a 503 only as a refusal schemathesis.toml and
#                   fuzz/hooks.py allow, and every status, content type, header and body as the document
#                   declares them)
#   FUZZ_WORKERS    concurrent workers (default 1: with several, schemathesis's threads race inside CPython 3.11's
#                   AST constructor and the run ends in "Runtime Error: AST constructor recursion depth mismatch";
#                   one worker took no longer here, 8.6 s for the short pass)
#   FUZZ_MIN_CASES  fail unless schemathesis generated at least this many cases
#                   (default 1000 for the full pass, 0 when MAX_EXAMPLES is given)
#
# Exits non-zero when any response is a 5xx or does not match the document.
set -euo pipefail

SCHEMATHESIS_VERSION=4.32.5
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# The Node scripts/setup.sh installed, when it did (the one on PATH is older than .node-version's major).
if [ -x "$ROOT/.cache/node/bin/node" ]; then export PATH="$ROOT/.cache/node/bin:$PATH"; fi
VENV="$ROOT/.cache/fuzz-venv"
REPORT_DIR="$ROOT/.cache/fuzz-report"
MAX_EXAMPLES=${1:-${FUZZ_MAX_EXAMPLES:-300}}
# The full pass (no argument, `make fuzz`) must generate at least 1,000 cases; a short pass (CI) need not.
if [[ $# -eq 0 ]]; then MIN_CASES=${FUZZ_MIN_CASES:-1000}; else MIN_CASES=${FUZZ_MIN_CASES:-0}; fi
CHECKS=${FUZZ_CHECKS:-not_a_server_error,expected_503_only,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance}

if [[ ! -x "$VENV/bin/st" ]] || [[ "$("$VENV/bin/st" --version 2>/dev/null)" != *"$SCHEMATHESIS_VERSION"* ]]; then
  echo "fuzz: installing schemathesis==$SCHEMATHESIS_VERSION into $VENV" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi

SERVICE_PID=""
WORK_DIR=""
cleanup() {
  if [[ -n "$SERVICE_PID" ]] && kill -0 "$SERVICE_PID" 2>/dev/null; then
    kill -TERM "$SERVICE_PID" 2>/dev/null || true
    wait "$SERVICE_PID" 2>/dev/null || true
  fi
  if [[ -n "$WORK_DIR" ]]; then rm -rf "$WORK_DIR"; fi
}
trap cleanup EXIT

BASE_URL=${RECALL_URL:-}
if [[ -z "$BASE_URL" ]]; then
  if [[ ! -f "$ROOT/dist/src/http/server.js" ]]; then
    (cd "$ROOT" && npm run --silent build)
  fi
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
  WORK_DIR=$(mktemp -d)
  BASE_URL="http://127.0.0.1:$PORT"
  echo "fuzz: starting the service on $BASE_URL (log: $REPORT_DIR/service.log)" >&2
  mkdir -p "$REPORT_DIR"
  # Rate limiting is lifted: the fuzzer would otherwise spend most cases on 429s.
  (cd "$ROOT" && PORT=$PORT HOST=127.0.0.1 DATA_DIR="$WORK_DIR/data" LOG_LEVEL=${LOG_LEVEL:-warn} \
    RATE_LIMIT_MAX=${RATE_LIMIT_MAX:-1000000000} MIN_GENERATION_WAIT_MS=${MIN_GENERATION_WAIT_MS:-50} exec node dist/src/http/server.js) >"$REPORT_DIR/service.log" 2>&1 &
  SERVICE_PID=$!
  # The service listens at once and loads the model and the demo world afterwards: fuzz it once it is ready.
  for _ in $(seq 1 1500); do
    if curl -fsS "$BASE_URL/readyz" >/dev/null 2>&1; then break; fi
    if ! kill -0 "$SERVICE_PID" 2>/dev/null; then
      echo "fuzz: the service exited before it was ready:" >&2
      tail -n 40 "$REPORT_DIR/service.log" >&2
      exit 1
    fi
    sleep 0.2
  done
  curl -fsS "$BASE_URL/readyz" >/dev/null || { echo "fuzz: $BASE_URL/readyz not ready after 300 s" >&2; exit 1; }
fi

args=(--config-file "$ROOT/scripts/fuzz/schemathesis.toml" run "$BASE_URL/openapi.json"
  --url "$BASE_URL"
  --checks "$CHECKS"
  --max-examples "$MAX_EXAMPLES"
  --workers "${FUZZ_WORKERS:-1}"
  --phases examples,coverage,fuzzing
  --request-timeout 30
  --wait-for-schema 60
  --suppress-health-check too_slow,filter_too_much,data_too_large
  --report junit --report-junit-path "$REPORT_DIR/junit.xml"
  --no-color)
if [[ -n "${FUZZ_SEED:-}" ]]; then args+=(--seed "$FUZZ_SEED"); fi
if [[ -n "${RECALL_API_KEY:-}" ]]; then args+=(--header "Authorization: Bearer $RECALL_API_KEY"); fi

echo "fuzz: schemathesis $SCHEMATHESIS_VERSION, $MAX_EXAMPLES examples per operation, checks: $CHECKS" >&2
mkdir -p "$REPORT_DIR"
set +e
SCHEMATHESIS_HOOKS="$ROOT/scripts/fuzz/hooks.py" "$VENV/bin/st" "${args[@]}" 2>&1 | tee "$REPORT_DIR/st.log"
status=${PIPESTATUS[0]}
set -e
# schemathesis's summary says "N generated"; a run that generated fewer cases than asked proves less.
generated=$(grep -Eo '[0-9]+ generated' "$REPORT_DIR/st.log" | tail -n 1 | grep -Eo '[0-9]+' || echo 0)
echo "fuzz: $generated cases generated (minimum $MIN_CASES), schemathesis exit status $status" >&2
if (( status == 0 && generated < MIN_CASES )); then
  echo "fuzz: fewer than $MIN_CASES cases; raise MAX_EXAMPLES" >&2
  exit 1
fi
exit "$status"
