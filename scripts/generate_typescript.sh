#!/usr/bin/env bash
# Generate the TypeScript code for protos/ into ROOT/clients/typescript/src/gen (ROOT
# defaults to .). protoc comes from grpcio-tools (the version pinned in pyproject, with
# the well-known types bundled); google/rpc/{status,error_details}.proto come from the
# googleapis-common-protos wheel in the same virtualenv. The plugin is ts-proto at the
# exact version pinned in clients/typescript/package.json (and package-lock.json),
# installed with `npm ci` into clients/typescript/node_modules when missing.
set -euo pipefail
ROOT="${1:-.}"
cd "$(dirname "$0")/.."
REPO="$PWD"
PY="$REPO/.venv/bin/python"
PKG="$REPO/clients/typescript"
PLUGIN="$PKG/node_modules/.bin/protoc-gen-ts_proto"

if ! command -v npm >/dev/null 2>&1; then
    echo "generate_typescript.sh: npm is not installed; cannot install ts-proto" >&2
    exit 1
fi
want=$(node -p 'require(process.argv[1]).devDependencies["ts-proto"]' "$PKG/package.json")
have=$(node -p 'try { require(process.argv[1]).version } catch { "" }' \
    "$PKG/node_modules/ts-proto/package.json" 2>/dev/null || true)
if [ ! -x "$PLUGIN" ] || [ "$have" != "$want" ]; then
    # --ignore-scripts: the package's prepare (a build) must not need the code being generated.
    (cd "$PKG" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
fi

WKT=$("$PY" -c 'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')
# The directory holding google/rpc/*.proto (site-packages of the virtualenv).
RPC=$("$PY" -c 'import google.rpc.status_pb2 as m, os; print(os.path.dirname(os.path.dirname(os.path.dirname(m.__file__))))')
PROTOS=$(cd protos && find scorewire -name '*.proto' | sort)
mkdir -p "$ROOT/clients/typescript/src/gen"
OUT=$(realpath "$ROOT/clients/typescript/src/gen")
rm -rf "${OUT:?}"/*
# Options: grpc-js service clients; oneofs as discriminated unions ($case); int64 as
# number (counts never exceed 2^53); proto3 `optional` scalars stay `?: number`.
OPTS="outputServices=grpc-js,env=node,esModuleInterop=true,oneof=unions,forceLong=number,useExactTypes=false"
# WKT comes before RPC so the well-known types are the ones bundled with this protoc.
(cd protos && "$PY" -m grpc_tools.protoc -I . -I "$WKT" -I "$RPC" \
    --plugin=protoc-gen-ts_proto="$PLUGIN" \
    --ts_proto_out="$OUT" --ts_proto_opt="$OPTS" \
    $PROTOS google/rpc/status.proto google/rpc/error_details.proto)
