#!/usr/bin/env bash
# The main job: install what is missing, build, load the bundled ontology and
# seeds into the embedded store (RocksDB under the user's data dir, or --data DIR)
# and serve the HTTP API. Extra arguments go to `toolgraph serve`.
# The airlock may read file sources under this folder (the README's examples
# name files in tests/fixtures); TOOLGRAPH_SOURCE_ROOT names another.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export TOOLGRAPH_MODEL_DIR="${TOOLGRAPH_MODEL_DIR:-$HOME/.cache/toolgraph/models/all-MiniLM-L6-v2-int8}"
exec cargo run --release -- serve --source-root "${TOOLGRAPH_SOURCE_ROOT:-$PWD}" "$@"
