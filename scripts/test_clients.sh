#!/usr/bin/env bash
# Run the Go, TypeScript and Java clients' tests against one real server started here.
# (The Python client's tests run inside pytest, which starts its own server.)
# A toolchain missing on a developer's machine is reported as skipped; under CI
# (CI=true) a missing toolchain fails the run, since CI machines have all of them.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

LOG=$(mktemp)
# Its own state directory (the observation queue's file, the run store) and one
# evaluation rule, so the clients' observe tests find their observations scored.
STATE=$(mktemp -d)
SCOREWIRE_METRICS_PORT=0 SCOREWIRE_STATE_DIR="$STATE" \
    SCOREWIRE_OBSERVE_RULES_FILE="$ROOT/tests/clients/observe_rules.yaml" \
    .venv/bin/scorewire serve --host 127.0.0.1 --port 0 >"$LOG" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$LOG" "$STATE"' EXIT
for _ in $(seq 1 100); do
    grep -q "listening on" "$LOG" && break
    kill -0 $SERVER 2>/dev/null || { cat "$LOG" >&2; exit 1; }
    sleep 0.1
done
ADDR=$(grep -m1 "listening on" "$LOG" | awk '{print $NF}')
[ -n "$ADDR" ] || { echo "server did not start" >&2; cat "$LOG" >&2; exit 1; }
export SCOREWIRE_ADDR="$ADDR"
echo "client tests against scorewire at $ADDR"

failed=()
skip_or_fail() {
    if [ "${CI:-}" = "true" ]; then
        echo "FAILED: $1 toolchain missing ($2) and CI has every toolchain" >&2
        failed+=("$1")
    else
        echo "SKIPPED: $1 client tests: $2 not found"
    fi
}

if command -v go >/dev/null 2>&1; then
    (cd clients/go && go vet ./... && go test -count=1 ./...) || failed+=(go)
else
    skip_or_fail go "go"
fi

if command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then
    (cd clients/typescript && npm ci --silent --no-audit --no-fund && npm test) || failed+=(typescript)
else
    skip_or_fail typescript "node/npm"
fi

if command -v mvn >/dev/null 2>&1 && command -v java >/dev/null 2>&1; then
    (cd clients/java && mvn -B -ntp test) || failed+=(java)
else
    skip_or_fail java "mvn/java"
fi

if [ ${#failed[@]} -gt 0 ]; then
    echo "client tests failed: ${failed[*]}" >&2
    exit 1
fi
echo "client tests passed: go typescript java"
