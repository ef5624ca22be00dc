#!/usr/bin/env bash
# Generate the Go code for protos/ into ROOT/clients/go/gen (ROOT defaults to .).
# protoc comes from grpcio-tools (the version pinned in pyproject, with the well-known
# types bundled); protoc-gen-go and protoc-gen-go-grpc are installed at the pinned
# versions below into the repository-local .tools/bin when missing or different.
set -euo pipefail
ROOT=$(mkdir -p "${1:-.}" && cd "${1:-.}" && pwd)
cd "$(dirname "$0")/.."
REPO="$PWD"
PY="$REPO/.venv/bin/python"

PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.1
TOOLS="$REPO/.tools/bin"

if ! command -v go >/dev/null 2>&1; then
    echo "generate_go.sh: go is not installed; cannot install the Go protoc plugins" >&2
    exit 1
fi
mkdir -p "$TOOLS"
# `protoc-gen-go --version` prints "protoc-gen-go v1.36.11"; -grpc prints "... 1.6.1".
if ! "$TOOLS/protoc-gen-go" --version 2>/dev/null | grep -qx "protoc-gen-go $PROTOC_GEN_GO_VERSION"; then
    GOBIN="$TOOLS" GOFLAGS=-mod=mod go install \
        "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION"
fi
if ! "$TOOLS/protoc-gen-go-grpc" --version 2>/dev/null \
        | grep -qx "protoc-gen-go-grpc ${PROTOC_GEN_GO_GRPC_VERSION#v}"; then
    GOBIN="$TOOLS" GOFLAGS=-mod=mod go install \
        "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION"
fi

WKT=$("$PY" -c 'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')
PROTOS=$(cd protos && find scorewire -name '*.proto' | sort)
OUT="$ROOT/clients/go/gen"
mkdir -p "$OUT"
rm -rf "$OUT/scorewire"
# module=… strips the go_package prefix so files land at gen/scorewire/v1.
(cd protos && "$PY" -m grpc_tools.protoc -I . -I "$WKT" \
    --plugin=protoc-gen-go="$TOOLS/protoc-gen-go" \
    --plugin=protoc-gen-go-grpc="$TOOLS/protoc-gen-go-grpc" \
    --go_out="$OUT" --go_opt=module=github.com/scorewire/scorewire/clients/go/gen \
    --go-grpc_out="$OUT" --go-grpc_opt=module=github.com/scorewire/scorewire/clients/go/gen \
    $PROTOS)
