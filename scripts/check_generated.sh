#!/usr/bin/env bash
# Regenerate every language's code into a temporary root and compare with the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
scripts/generate.sh "$TMP"
status=0
for dir in clients/python/src/scorewire/v1 clients/go/gen clients/typescript/src/gen \
           clients/java/src/main/java-gen; do
    if [ -d "$TMP/$dir" ] || [ -d "$dir" ]; then
        if ! diff -r "$TMP/$dir" "$dir" >/dev/null 2>&1; then
            echo "generated code in $dir is stale: run 'make generate' and commit" >&2
            diff -r "$TMP/$dir" "$dir" | head -20 >&2 || true
            status=1
        fi
    fi
done
# The descriptor set reflection serves (with source info).
DESC=service/scorewire/server/scorewire_v1.binpb
if ! cmp -s "$TMP/$DESC" "$DESC"; then
    echo "$DESC is stale: run 'make generate' and commit" >&2
    status=1
fi
# The suite JSON Schemas are generated from the check registry.
if ! .venv/bin/python scripts/gen_schemas.py --check; then
    echo "schemas/ are stale: run '.venv/bin/python scripts/gen_schemas.py' and commit" >&2
    status=1
fi
[ $status = 0 ] && echo "generated code is fresh"
exit $status
