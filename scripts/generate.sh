#!/usr/bin/env bash
# Regenerate every language's code from protos/ into the tree rooted at $1 (default: .).
# `make generate` writes into the repository; `make check-generated` writes into a
# temporary root and compares, so it never touches the working tree.
set -euo pipefail
ROOT="${1:-.}"
cd "$(dirname "$0")/.."
PY=.venv/bin/python
PROTOS=$(cd protos && find scorewire -name '*.proto' | sort)

# --- Python (grpcio-tools: protoc and the grpc plugin pinned by pyproject) --------------
PY_OUT="$ROOT/clients/python/src"
mkdir -p "$PY_OUT"
rm -rf "$PY_OUT/scorewire/v1"
mkdir -p "$PY_OUT/scorewire/v1"
# mypy-protobuf (pinned in pyproject) writes typed .pyi stubs for messages and services.
OUT_ABS="$(realpath "$PY_OUT")"
(cd protos && PATH="$(realpath ../.venv/bin):$PATH" "../$PY" -m grpc_tools.protoc -I . \
    --python_out="$OUT_ABS" \
    --mypy_out="$OUT_ABS" \
    --grpc_python_out="$OUT_ABS" \
    --mypy_grpc_out="$OUT_ABS" \
    $PROTOS) 2> >(grep -v '^Writing mypy to' >&2)  # the plugin's progress lines are noise
# scorewire/v1 is a regular package inside the `scorewire` namespace package.
printf '"""Generated from protos/scorewire/v1 by scripts/generate.sh. DO NOT EDIT."""\n' \
    > "$PY_OUT/scorewire/v1/__init__.py"

# --- Descriptors for server reflection, with the protos' comments ----------------------
# The descriptors inside the generated _pb2.py files carry no source info, so reflection
# would serve no comments: the server serves this set instead (grpcurl describe shows them).
mkdir -p "$ROOT/service/scorewire/server"
DESC_ABS="$(realpath "$ROOT/service/scorewire/server")"
WKT="$(realpath "$(.venv/bin/python -c 'import grpc_tools, os; print(os.path.dirname(grpc_tools.__file__))')/_proto")"
(cd protos && "../$PY" -m grpc_tools.protoc -I . -I "$WKT" \
    --include_source_info --include_imports \
    --descriptor_set_out="$DESC_ABS/scorewire_v1.binpb" \
    $PROTOS)

# --- Other languages: each has its own script, given the same root ----------------------
for lang in go typescript java; do
    if [ -x "scripts/generate_$lang.sh" ]; then
        "scripts/generate_$lang.sh" "$ROOT"
    fi
done
