#!/usr/bin/env bash
# The main job: install what is missing, build, load the bundled ontology and
# seeds into the embedded store (RocksDB under the user's data dir, or --data DIR)
# and serve the HTTP API. Extra arguments go to `toolgraph serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export TOOLGRAPH_MODEL_DIR="${TOOLGRAPH_MODEL_DIR:-$HOME/.cache/toolgraph/models/all-MiniLM-L6-v2-int8}"
exec cargo run --release -- serve "$@"
