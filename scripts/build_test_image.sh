#!/usr/bin/env bash
# Build deploy/Dockerfile the way `make test-image` tests it, without a Docker engine or
# an image registry: a local Debian base made by mmdebstrap (cached, keyed by its package
# list) stands in for python:3.11-slim, and buildah builds the Dockerfile on it with
# chroot isolation. Prints the image's name on stdout; progress goes to stderr.
#
#   scripts/build_test_image.sh [IMAGE]    (default localhost/scorewire:test)
#   scripts/build_test_image.sh --print-base   the base image's name, nothing built
#   SCOREWIRE_IMAGE_CACHE=DIR              where the base's tarball is kept
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=${1:-localhost/scorewire:test}
CACHE=${SCOREWIRE_IMAGE_CACHE:-/var/tmp/scorewire-image-cache}
SUITE=bookworm
VARIANT=minbase
# Debian's python3 in bookworm is 3.11, as in the default python:3.11-slim-bookworm;
# passwd for the Dockerfile's useradd. No ca-certificates: the build borrows the host's.
PACKAGES=python3,python3-venv,python3-pip,python-is-python3,passwd
KEY=$(printf '%s\n' "$SUITE" "$VARIANT" "$PACKAGES" | sha256sum | cut -c1-12)
BASE=localhost/scorewire-test-base:$KEY
# The build reaches PyPI through this machine's proxy, whose CA is in the host bundle: the
# bundle is mounted into the build's RUN steps only, never copied into a layer.
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt

if [ "$IMAGE" = --print-base ]; then
    echo "$BASE"
    exit 0
fi

if ! buildah inspect --type image "$BASE" >/dev/null 2>&1; then
    mkdir -p "$CACHE"
    tarball=$CACHE/base-$KEY.tar
    if [ ! -s "$tarball" ]; then
        echo "building the Debian base ($SUITE $VARIANT: $PACKAGES) with mmdebstrap" >&2
        # --format: the name's .partial suffix would otherwise make it a directory.
        mmdebstrap --quiet --format=tar --variant="$VARIANT" --include="$PACKAGES" \
            "$SUITE" "$tarball.partial"
        mv "$tarball.partial" "$tarball"
    fi
    echo "importing $tarball as $BASE" >&2
    ctr=$(buildah from scratch)
    trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
    buildah add --quiet "$ctr" "$tarball" / >/dev/null
    buildah config --cmd /bin/bash "$ctr"
    buildah commit --quiet --rm "$ctr" "$BASE" >/dev/null
    trap - EXIT
fi

echo "building deploy/Dockerfile on $BASE as $IMAGE" >&2
volumes=()
if [ -s "$CA_BUNDLE" ]; then
    volumes=(-v "$CA_BUNDLE:$CA_BUNDLE:ro")
fi
build() {
    buildah bud --quiet --isolation chroot --layers "${volumes[@]}" \
        --build-arg PYTHON_IMAGE="$BASE" -f deploy/Dockerfile "$@" . >&2
}
# --layers: an unchanged step (the dependencies, the COPY of unchanged sources) is reused.
# The builder stage gets a name too, so that pruning the images earlier builds left
# untagged keeps its cached layers (the final image keeps its own stage's).
build --target builder -t "$IMAGE-builder"
build -t "$IMAGE"
buildah rmi --prune >/dev/null 2>&1 || true
echo "$IMAGE"
