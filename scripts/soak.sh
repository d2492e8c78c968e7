#!/usr/bin/env bash
# The 10-minute soak (benches/soak.rs) against the release binary: mixed
# search/select/resolve/prompt/register/usage/approve traffic at 32
# keep-alive connections, kill -9 and restart every 2 minutes, then the
# acknowledged writes checked on the restarted server. Writes
# benches/results/soak.json and prints it.
# Usage: scripts/soak.sh   (TOOLGRAPH_SOAK_SECONDS, _CONNECTIONS, _KILL_EVERY)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export TOOLGRAPH_MODEL_DIR="${TOOLGRAPH_MODEL_DIR:-$HOME/.cache/toolgraph/models/all-MiniLM-L6-v2-int8}"
TARGET="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet
mkdir -p benches/results
TOOLGRAPH_BIN="$TARGET/release/toolgraph" \
TOOLGRAPH_SOAK_OUT=benches/results/soak.json \
  cargo bench --quiet --bench soak
