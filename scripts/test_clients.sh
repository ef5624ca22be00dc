#!/usr/bin/env bash
# Run the Go, TypeScript and Java clients' tests, each against a real server of its own
# started here. The three run at once (each waits on its toolchain part of the time, so
# on two cores they take two thirds of what they took one after another), and a server
# each keeps one client's calls out of another's results. Each client's output is
# printed whole when it ends.
# (The Python client's tests run inside pytest, which starts its own server.)
# A toolchain missing on a developer's machine is reported as skipped; under CI
# (CI=true) a missing toolchain fails the run, since CI machines have all of them.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

WORK=$(mktemp -d)
SERVERS=()
RUNNING=()
cleanup() {
    for pid in "${RUNNING[@]}" "${SERVERS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${RUNNING[@]}" "${SERVERS[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

# start_server NAME: a server of NAME's own in the background (its own state directory,
# the observe tests' evaluation rule, a free metrics port), logging to $WORK/NAME.server.log.
start_server() {
    local log="$WORK/$1.server.log" state="$WORK/$1.state"
    mkdir -p "$state"
    SCOREWIRE_METRICS_PORT=0 SCOREWIRE_STATE_DIR="$state" \
        SCOREWIRE_OBSERVE_RULES_FILE="$ROOT/tests/clients/observe_rules.yaml" \
        .venv/bin/scorewire serve --host 127.0.0.1 --port 0 >"$log" 2>&1 &
    SERVERS+=($!)
}

# server_address NAME: wait for NAME's server to listen; print its address.
server_address() {
    local log="$WORK/$1.server.log" pid=$2
    for _ in $(seq 1 300); do
        grep -q "listening on" "$log" && break
        kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; return 1; }
        sleep 0.1
    done
    local addr
    addr=$(grep -m1 "listening on" "$log" | awk '{print $NF}')
    [ -n "$addr" ] || { echo "the $1 client's server did not start" >&2; cat "$log" >&2; return 1; }
    echo "$addr"
}

failed=()
skip_or_fail() {
    if [ "${CI:-}" = "true" ]; then
        echo "FAILED: $1 toolchain missing ($2) and CI has every toolchain" >&2
        failed+=("$1")
    else
        echo "SKIPPED: $1 client tests: $2 not found"
    fi
}

go_tests() { (cd clients/go && go vet ./... && go test -count=1 ./...); }
typescript_tests() {
    (cd clients/typescript && npm ci --silent --no-audit --no-fund && npm test)
}
java_tests() { (cd clients/java && mvn -B -ntp test); }

clients=()
has() { for c in "$@"; do command -v "$c" >/dev/null 2>&1 || return 1; done; }
if has go; then clients+=(go); else skip_or_fail go "go"; fi
if has npm node; then clients+=(typescript); else skip_or_fail typescript "node/npm"; fi
if has mvn java; then clients+=(java); else skip_or_fail java "mvn/java"; fi

for name in "${clients[@]}"; do start_server "$name"; done
for i in "${!clients[@]}"; do
    name=${clients[$i]}
    (
        t0=$(date +%s)
        addr=$(server_address "$name" "${SERVERS[$i]}") || exit 1
        echo "$name client tests against scorewire at $addr"
        status=0
        SCOREWIRE_ADDR="$addr" "${name}_tests" || status=$?
        echo "$name client tests took $(( $(date +%s) - t0 )) s"
        exit $status
    ) >"$WORK/$name.log" 2>&1 &
    RUNNING+=($!)
done

for i in "${!clients[@]}"; do
    name=${clients[$i]}
    status=0
    wait "${RUNNING[$i]}" || status=$?
    echo "=== $name client tests"
    cat "$WORK/$name.log"
    [ "$status" = 0 ] || failed+=("$name")
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "client tests failed: ${failed[*]}" >&2
    exit 1
fi
echo "client tests passed: ${clients[*]}"
