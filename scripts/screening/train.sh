#!/usr/bin/env bash
# Refits the learned screen: rebuilds the labelled data from the committed
# sources and payload templates, then fits src/screen/weights.json on its
# train split with the real MiniLM model (examples/train_screen.rs).
# Usage: scripts/screening/train.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/setup.sh
export TOOLGRAPH_MODEL_DIR="${TOOLGRAPH_MODEL_DIR:-$HOME/.cache/toolgraph/models/all-MiniLM-L6-v2-int8}"
python3 scripts/screening/build_data.py
cargo run --release --quiet --example train_screen
