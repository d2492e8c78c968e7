#!/usr/bin/env bash
# The gateway's overhead (benches/gateway.rs) against the release binary:
# a loopback upstream called directly and through POST /v1/call, then 32
# concurrent callers for 30 s. Writes benches/results/gateway.json.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet
mkdir -p benches/results
TOOLGRAPH_BIN="$TARGET/release/toolgraph" \
TOOLGRAPH_GATEWAY_OUT=benches/results/gateway.json \
  cargo bench --quiet --bench gateway
