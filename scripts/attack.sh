#!/usr/bin/env bash
# The standing attack suite (tests/it/attack/) at ten times the rounds CI
# runs, then the fuzz targets' smoke run at 100,000 mutations each.
# Usage: scripts/attack.sh   (TOOLGRAPH_ATTACK_SCALE=N to change the scale)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export TOOLGRAPH_MODEL_DIR="${TOOLGRAPH_MODEL_DIR:-$HOME/.cache/toolgraph/models/all-MiniLM-L6-v2-int8}"
export TOOLGRAPH_ATTACK_SCALE="${TOOLGRAPH_ATTACK_SCALE:-10}"
cargo test --test it -- --nocapture --test-threads 2 attack::
TOOLGRAPH_FUZZ_SMOKE="${TOOLGRAPH_FUZZ_SMOKE:-100000}" cargo test --test it -- --nocapture fuzz_smoke::
