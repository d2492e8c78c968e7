#!/usr/bin/env bash
# CI accuracy gate: fixed, seeded samples of the dev datasets ranked in joint
# mode with the real model, compared with benches/baseline.jsonl; fails when
# any metric drops by more than 0.02. `--update` rewrites the baseline (a
# deliberate, reviewed commit).
set -euo pipefail
cd "$(dirname "$0")/.."
D=benches/datasets
B=benches/baseline.jsonl
# scripts/test.sh passes the binary `cargo test` just built (TOOLGRAPH_BIN),
# so CI does not build it a second time with other features.
if [ -z "${TOOLGRAPH_BIN:-}" ]; then cargo build --quiet; fi
TG=("${TOOLGRAPH_BIN:-${CARGO_TARGET_DIR:-target}/debug/toolgraph}")
if [ "${1:-}" = "--update" ]; then
  rm -f "$B"; mode=(--append "$B")
else
  mode=(--baseline "$B")
fi
run() { "${TG[@]}" eval --mode joint --seed 7 "${mode[@]}" "$@" >/dev/null; }
run --tools $D/metatool/tools.jsonl --queries $D/metatool/queries.jsonl --sample 600
# every MetaTool query with candidates (1,492): in a 400 sample only 35 had
# them, so one query (0.029) was over the 0.02 bound
run --tools $D/metatool/tools.jsonl --queries $D/metatool/queries.jsonl --candidates
run --tools $D/metatool/tools.jsonl --queries $D/metatool/queries_reliability.jsonl --candidates --sample 300
run --tools $D/metatool/tools.jsonl --queries $D/metatool/queries_awareness.jsonl --sample 400
run --tools $D/bfcl_multiple/tools.jsonl --queries $D/bfcl_multiple/queries.jsonl --candidates --sample 500
run --tools $D/sealtools/tools.jsonl --queries $D/sealtools/queries.jsonl --sample 400
# dependency-labelled: the plain run and the dependency-aware one (joint+deps)
run --tools $D/toollinkos/tools.jsonl --queries $D/toollinkos/queries.jsonl --dependencies --sample 500
echo "accuracy gate passed"
