#!/usr/bin/env bash
# Install what the tests need beyond the Python environment, when it is missing:
# redis-server, postgresql, tmux, prometheus, nginx, haproxy, chromium and the grpc-java plugin (Debian packages); buf,
# @grafana/schema and typescript (npm, pinned); grpcurl (go install, pinned; `go version -m`
# reads the version it was built at); the client toolchains' dependencies; buildah and
# mmdebstrap (Debian packages) for the image test. Idempotent and quiet when everything is
# present.
set -euo pipefail
cd "$(dirname "$0")/.."

BUF_VERSION=1.75.0

need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v tmux >/dev/null 2>&1 || need_apt+=(tmux)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt+=(postgresql)
command -v prometheus >/dev/null 2>&1 || need_apt+=(prometheus)
command -v grpc_java_plugin >/dev/null 2>&1 || need_apt+=(protobuf-compiler-grpc-java-plugin)
# The image test (make test-image): buildah builds and runs deploy/Dockerfile with chroot
# isolation, mmdebstrap makes its Debian base; setpriv (util-linux) drops to the image's user.
command -v buildah >/dev/null 2>&1 || need_apt+=(buildah)
command -v mmdebstrap >/dev/null 2>&1 || need_apt+=(mmdebstrap)
command -v setpriv >/dev/null 2>&1 || need_apt+=(util-linux)
# The multi-replica tests put a real L7 proxy in front of several servers (nginx's grpc_pass
# and HAProxy); the viewer tests drive Debian's Chromium headless.
command -v nginx >/dev/null 2>&1 || need_apt+=(nginx-light)
command -v haproxy >/dev/null 2>&1 || need_apt+=(haproxy)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "missing ${need_apt[*]}: run as root or install them" >&2
        exit 1
    fi
    echo "installing ${need_apt[*]} from Debian packages"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if [ ! -x .tools/buf/node_modules/.bin/buf ] \
    || [ "$(.tools/buf/node_modules/.bin/buf --version)" != "$BUF_VERSION" ]; then
    echo "installing buf $BUF_VERSION from npm"
    mkdir -p .tools/buf
    npm install --silent --no-audit --no-fund --prefix .tools/buf "@bufbuild/buf@$BUF_VERSION" >/dev/null
fi

# Grafana's published dashboard schema (@grafana/schema, TypeScript types) and the compiler
# that checks deploy/'s dashboard against it (tests/metrics/test_dashboard_schema.py).
GRAFANA_SCHEMA_VERSION=13.2.3
TYPESCRIPT_VERSION=5.9.3
GS=.tools/grafana-schema/node_modules
if [ "$(node -p "require('./$GS/@grafana/schema/package.json').version" 2>/dev/null)" != "$GRAFANA_SCHEMA_VERSION" ] \
    || [ "$(node -p "require('./$GS/typescript/package.json').version" 2>/dev/null)" != "$TYPESCRIPT_VERSION" ]; then
    echo "installing @grafana/schema $GRAFANA_SCHEMA_VERSION and typescript $TYPESCRIPT_VERSION from npm"
    mkdir -p .tools/grafana-schema
    npm install --silent --no-audit --no-fund --prefix .tools/grafana-schema \
        "@grafana/schema@$GRAFANA_SCHEMA_VERSION" "typescript@$TYPESCRIPT_VERSION" >/dev/null
fi

# grpcurl, pinned: the tests run it against the real server (reflection, README examples).
GRPCURL_VERSION=v1.9.3
if [ ! -x .tools/bin/grpcurl ] \
    || ! go version -m .tools/bin/grpcurl 2>/dev/null \
        | grep -Eq "^\s+mod\s+github.com/fullstorydev/grpcurl\s+$GRPCURL_VERSION\s"; then
    if ! command -v go >/dev/null 2>&1; then
        echo "missing go: install Go to build grpcurl $GRPCURL_VERSION" >&2
        exit 1
    fi
    echo "installing grpcurl $GRPCURL_VERSION with go install (about a minute the first time)"
    mkdir -p .tools/bin
    GOBIN="$(realpath .tools/bin)" \
        go install "github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION"
fi
