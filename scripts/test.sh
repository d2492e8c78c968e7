#!/usr/bin/env bash
# The test command: installs what is missing, then checks formatting and
# lints, runs every test with the real model, and runs the accuracy gate.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/setup-browser.sh
scripts/setup-bolt.sh
scripts/setup-test-clients.sh
scripts/setup-inspector.sh
export TOOLGRAPH_MODEL_DIR="${TOOLGRAPH_MODEL_DIR:-$HOME/.cache/toolgraph/models/all-MiniLM-L6-v2-int8}"
cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
cargo test --all-targets
TOOLGRAPH_BIN="${CARGO_TARGET_DIR:-target}/debug/toolgraph" scripts/accuracy-gate.sh
