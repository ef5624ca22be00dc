#!/usr/bin/env bash
# Install the server and each client the way a user outside this repository does, and
# call the real server from a tiny program in each language (issue 15 §2):
#
#   python      the server and client wheels, built here, installed into fresh
#               virtualenvs with the package index off (--no-index --find-links):
#               nothing named scorewire-* can come from an index
#   go          a module outside the repository that requires the client through a
#               `replace` directive pointing at a checkout
#   typescript  `npm install <checkout>/clients/typescript` (built on install), then
#               a TypeScript program type-checked against the package root's exports
#   java        `mvn install` of the client, then a Maven project depending on
#               dev.scorewire:scorewire-client
#
# The checkout is a copy of the tracked files (no .venv, node_modules, dist or target),
# in a temporary directory; the server is the one installed from the wheel. Only the
# package registries are used (PyPI, the Go proxy, npm, Maven Central); the wheels of
# the server's dependencies are cached in $SCOREWIRE_WHEELHOUSE between runs.
# `ROUTES="python go"` runs a subset (python always runs: it provides the server).
# A missing toolchain is a skip on a workstation and a failure under CI (CI=true).
# Once the server runs, the client routes run at once: each waits on its package registry
# part of the time, which the others use. Each route's output is printed whole, with its
# time, when it ends.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROUTES=${ROUTES:-"python go typescript java"}
WHEELHOUSE=${SCOREWIRE_WHEELHOUSE:-${XDG_CACHE_HOME:-$HOME/.cache}/scorewire/wheelhouse}
PY=${PYTHON:-python3}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/scorewire-install-XXXXXX")
SERVER=""
cleanup() {
    if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

failed=()
timings=()
step_start() { STEP=$1; STEP_T0=$(date +%s); echo "=== install route: $STEP"; }
step_end() { timings+=("$STEP $(( $(date +%s) - STEP_T0 ))s"); }
missing() {
    if [ "${CI:-}" = "true" ]; then
        echo "FAILED: $1 route: $2 not found, and CI has every toolchain" >&2
        failed+=("$1")
    else
        echo "SKIPPED: $1 route: $2 not found"
    fi
}
has() { for c in "$@"; do command -v "$c" >/dev/null 2>&1 || return 1; done; }

# --- a checkout: the tracked files only ------------------------------------------------
CHECKOUT="$WORK/checkout"
mkdir -p "$CHECKOUT"
git ls-files -z -co --exclude-standard -- pyproject.toml hatch_build.py README.md service clients \
    | tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$CHECKOUT"

# --- python: wheels into fresh virtualenvs, index off ----------------------------------
step_start python-server
mkdir -p "$WORK/dist-server" "$WORK/dist-client" "$WHEELHOUSE"
# The server's wheel carries the native scoring kernel, compiled into it (hatch_build.py;
# the checkout's build reuses this tree's cargo target directory): required here, so a
# kernel that does not build fails the route instead of installing a pure-Python server.
SCOREWIRE_BUILD_NATIVE=required CARGO_TARGET_DIR="$ROOT/service/native/target" \
    "$ROOT/.venv/bin/pip" wheel -q --no-deps -w "$WORK/dist-server" "$CHECKOUT"
"$ROOT/.venv/bin/pip" wheel -q --no-deps -w "$WORK/dist-client" "$CHECKOUT/clients/python"
SERVER_WHEEL=$(ls "$WORK"/dist-server/scorewire-*.whl)
# The dependency confusion this guards against: no requirement on a scorewire-* name.
if unzip -p "$SERVER_WHEEL" '*.dist-info/METADATA' | grep -i '^Requires-Dist: scorewire'; then
    echo "FAILED: the server wheel requires a scorewire-* distribution" >&2
    exit 1
fi
"$PY" -m venv "$WORK/venv-server"
# Only the server wheel and third-party wheels: the server needs no client wheel.
install_server() {
    "$WORK/venv-server/bin/pip" install -q --no-index --find-links "$WORK/dist-server" \
        --find-links "$WHEELHOUSE" scorewire
}
if ! install_server 2>/dev/null; then
    # Third-party wheels come from PyPI into the cache when it lacks some (the first
    # run, or a changed pin); ours are never looked up there.
    "$ROOT/.venv/bin/pip" download -q -d "$WHEELHOUSE" "$SERVER_WHEEL"
    rm -f "$WHEELHOUSE"/scorewire-* "$WHEELHOUSE"/scorewire_client-*
    install_server
fi
"$WORK/venv-server/bin/python" -c 'from scorewire.engine import native; assert native.available()' \
    || { echo "FAILED: the server installed from its wheel does not find its native kernel" >&2; exit 1; }
mkdir -p "$WORK/state"
(cd "$WORK/state" && SCOREWIRE_METRICS_PORT=0 exec "$WORK/venv-server/bin/scorewire" serve \
    --host 127.0.0.1 --port 0 >"$WORK/server.log" 2>&1) &
SERVER=$!
for _ in $(seq 1 300); do
    grep -q "listening on" "$WORK/server.log" && break
    kill -0 "$SERVER" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
    sleep 0.1
done
ADDR=$(grep -m1 "listening on" "$WORK/server.log" | awk '{print $NF}')
[ -n "$ADDR" ] || { echo "the installed server did not start" >&2; cat "$WORK/server.log" >&2; exit 1; }
export SCOREWIRE_ADDR="$ADDR"
echo "installed server listening on $ADDR"
# Its start-up line says the kernel is in use (it is logged just after the ready line).
for _ in $(seq 1 100); do grep -q "serving on" "$WORK/server.log" && break; sleep 0.1; done
grep -q "scoring native" "$WORK/server.log" \
    || { echo "FAILED: the installed server does not say it scores natively" >&2; cat "$WORK/server.log" >&2; exit 1; }
step_end

route_python() {
    "$PY" -m venv "$WORK/venv-client"
    "$WORK/venv-client/bin/pip" install -q --no-index --find-links "$WORK/dist-client" \
        --find-links "$WHEELHOUSE" scorewire-client
    mkdir -p "$WORK/py-app"
    cat >"$WORK/py-app/main.py" <<'EOF'
import os
import uuid

from scorewire.client import Client, output_hash

with Client(os.environ["SCOREWIRE_ADDR"]) as client:
    resp = client.score("Paris", checks=[{"type": "contains", "params": {"needles": ["Paris"]}}])
    assert resp.passed, resp
    sample = f"route-python-{uuid.uuid4()}"
    client.put_labels([{"sample_id": sample, "output": "Paris", "passed": True, "labeller": "ann"}])
    (label,) = client.list_labels(sample_id=sample).labels
    assert label.output_hash == output_hash("Paris"), label
print("python route: ok")
EOF
    (cd "$WORK/py-app" && "$WORK/venv-client/bin/python" main.py)
}

# --- go: a replace directive against the checkout --------------------------------------
route_go() (
    set -e
    # go.mod's `go` line is the oldest Go the module builds with: the highest
    # `go` line among its dependencies, no higher.
    cd "$CHECKOUT/clients/go"
    want=$(go list -m -f '{{if not .Main}}{{.GoVersion}}{{end}}' all | sort -V | tail -1)
    have=$(go list -m -f '{{.GoVersion}}')
    [ "$have" = "$want" ] || { echo "go.mod says go $have; its dependencies need $want" >&2; exit 1; }
    mkdir -p "$WORK/go-app" && cd "$WORK/go-app"
    cat >go.mod <<EOF
module example.com/scorewire-route

go $have

require github.com/scorewire/scorewire/clients/go v0.0.0

replace github.com/scorewire/scorewire/clients/go => $CHECKOUT/clients/go
EOF
    cat >main.go <<'EOF'
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	scorewire "github.com/scorewire/scorewire/clients/go"
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

func main() {
	ctx := context.Background()
	c, err := scorewire.Dial(os.Getenv("SCOREWIRE_ADDR"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	resp, err := c.Score(ctx, &scorewirev1.ScoreRequest{
		Output: scorewire.Text("Paris"),
		Checks: []*scorewirev1.CheckSpec{scorewire.MustCheck("contains", map[string]any{"needles": []string{"Paris"}})},
	})
	if err != nil || !resp.GetPassed() {
		log.Fatalf("Score = %v, %v", resp, err)
	}
	sample := "route-go-" + scorewire.NewRequestID()
	label := &scorewirev1.Label{SampleId: sample, OutputHash: scorewire.OutputHash("Paris"), Passed: true, Labeller: "ann"}
	if _, err := c.PutLabels(ctx, &scorewirev1.PutLabelsRequest{Labels: []*scorewirev1.Label{label}}); err != nil {
		log.Fatal(err)
	}
	page, err := c.ListLabels(ctx, &scorewirev1.ListLabelsRequest{SampleId: sample})
	if err != nil || len(page.GetLabels()) != 1 {
		log.Fatalf("ListLabels = %v, %v", page, err)
	}
	fmt.Println("go route: ok")
}
EOF
    go mod tidy
    go build -o route .
    ./route
)

# --- typescript: npm install of the checkout's package directory -----------------------
route_typescript() (
    set -e
    TS_VERSION=$(node -p "require('$CHECKOUT/clients/typescript/package.json').devDependencies.typescript")
    mkdir -p "$WORK/ts-app" && cd "$WORK/ts-app"
    npm init -y >/dev/null
    npm install --no-audit --no-fund --loglevel=error "$CHECKOUT/clients/typescript"
    npm install --no-audit --no-fund --loglevel=error --save-dev "typescript@$TS_VERSION" "@types/node@20"
    cat >main.ts <<'EOF'
import { randomUUID } from "node:crypto";

import { type Label, type ListLabelsResponse, ScorewireClient, outputHash } from "@scorewire/client";

async function main(): Promise<void> {
  const client = new ScorewireClient(process.env.SCOREWIRE_ADDR!);
  try {
    const resp = await client.score({ output: { text: "Paris" }, compact: ["contains:Paris"] });
    if (!resp.passed) throw new Error(`score failed: ${JSON.stringify(resp)}`);
    const sampleId = `route-ts-${randomUUID()}`;
    const label: Partial<Label> = { sampleId, outputHash: outputHash("Paris"), passed: true, labeller: "ann" };
    await client.putLabels({ labels: [label] });
    const page: ListLabelsResponse = await client.listLabels({ sampleId });
    if (page.labels.length !== 1) throw new Error(`listed ${page.labels.length} labels`);
    console.log("typescript route: ok");
  } finally {
    client.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
EOF
    npx tsc --strict --module node16 --moduleResolution node16 --target ES2022 --types node main.ts
    node main.js
)

# --- java: mvn install of the client, then a project depending on it -------------------
route_java() (
    set -e
    VERSION=$(sed -n 's|^  <version>\(.*\)</version>|\1|p' "$CHECKOUT/clients/java/pom.xml" | head -1)
    (cd "$CHECKOUT/clients/java" && mvn -B -ntp -q -Dstyle.color=never install -DskipTests)
    mkdir -p "$WORK/java-app/src/main/java/route" && cd "$WORK/java-app"
    cat >pom.xml <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>scorewire-route</artifactId>
  <version>1</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>dev.scorewire</groupId>
      <artifactId>scorewire-client</artifactId>
      <version>$VERSION</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.14.1</version>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-resources-plugin</artifactId>
        <version>3.3.1</version>
      </plugin>
    </plugins>
  </build>
</project>
EOF
    cat >src/main/java/route/Main.java <<'EOF'
package route;

import dev.scorewire.client.ScorewireClient;
import dev.scorewire.v1.Label;
import dev.scorewire.v1.ListLabelsRequest;
import dev.scorewire.v1.Output;
import dev.scorewire.v1.PutLabelsRequest;
import dev.scorewire.v1.ScoreRequest;
import java.util.UUID;

public final class Main {
  public static void main(String[] args) {
    try (ScorewireClient client = ScorewireClient.newBuilder(System.getenv("SCOREWIRE_ADDR")).build()) {
      ScoreRequest score =
          ScoreRequest.newBuilder().setOutput(Output.newBuilder().setText("Paris")).addCompact("contains:Paris").build();
      if (!client.score(score).getPassed()) {
        throw new AssertionError("score failed");
      }
      String sample = "route-java-" + UUID.randomUUID();
      Label label =
          Label.newBuilder()
              .setSampleId(sample)
              .setOutputHash(ScorewireClient.outputHash("Paris"))
              .setPassed(true)
              .setLabeller("ann")
              .build();
      client.putLabels(PutLabelsRequest.newBuilder().addLabels(label).build());
      int listed = client.listLabels(ListLabelsRequest.newBuilder().setSampleId(sample).build()).getLabelsCount();
      if (listed != 1) {
        throw new AssertionError("listed " + listed + " labels");
      }
    }
    System.out.println("java route: ok");
  }
}
EOF
    mvn -B -ntp -q -Dstyle.color=never compile \
        org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath \
        -Dmdep.outputFile=cp.txt -Dmdep.includeScope=runtime
    java -cp "target/classes:$(cat cp.txt)" route.Main
)

# --- the client routes, at once ---------------------------------------------------------
LAUNCHED=()
PIDS=()
# launch NAME: route_NAME in the background, its output and its time kept in $WORK.
launch() {
    (
        set +e
        t0=$(date +%s)
        ( set -e; "route_$1" ) >"$WORK/route-$1.log" 2>&1
        status=$?
        echo "$1 $(( $(date +%s) - t0 ))s" >"$WORK/route-$1.time"
        exit $status
    ) &
    LAUNCHED+=("$1")
    PIDS+=($!)
}
launch python
if [[ " $ROUTES " == *" go "* ]]; then
    if has go; then launch go; else missing go go; fi
fi
if [[ " $ROUTES " == *" typescript "* ]]; then
    if has node npm; then launch typescript; else missing typescript "node/npm"; fi
fi
if [[ " $ROUTES " == *" java "* ]]; then
    if has mvn java; then launch java; else missing java "mvn/java"; fi
fi
for i in "${!LAUNCHED[@]}"; do
    name=${LAUNCHED[$i]}
    status=0
    wait "${PIDS[$i]}" || status=$?
    echo "=== install route: $name"
    cat "$WORK/route-$name.log"
    timings+=("$(cat "$WORK/route-$name.time")")
    [ "$status" = 0 ] || failed+=("$name")
done

echo "install route timings: ${timings[*]}"
if [ ${#failed[@]} -gt 0 ]; then
    echo "install routes failed: ${failed[*]}" >&2
    exit 1
fi
echo "install routes passed: $ROUTES"
