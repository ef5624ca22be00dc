#!/usr/bin/env bash
# Install what the tests need beyond the Python environment, when it is missing:
# redis-server, postgresql, tmux, prometheus and the grpc-java plugin (Debian packages), buf (npm, pinned), and the client
# toolchains' dependencies; buildah and mmdebstrap (Debian packages) for the image test.
# Idempotent and quiet when everything is present.
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
