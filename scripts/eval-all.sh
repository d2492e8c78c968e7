#!/usr/bin/env bash
# Reproduces the README accuracy table and chart: every dev dataset, every
# mode, written to benches/results/ (Markdown per run, all.jsonl, accuracy.svg).
# MetaTool's 21k single-tool queries are sampled (3,000, seed 7) to keep the
# run short; pass --full to rank all of them.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet
TG="${CARGO_TARGET_DIR:-target}/debug/toolgraph"
D=benches/datasets
R=benches/results
mkdir -p "$R"; rm -f "$R/all.jsonl"
MT_SAMPLE=(--sample 3000 --seed 7); [ "${1:-}" = "--full" ] && MT_SAMPLE=()
run() { local out=$1; shift; "$TG" eval --append "$R/all.jsonl" "$@" > "$R/$out.md"; }
run metatool_global      --tools $D/metatool/tools.jsonl --queries $D/metatool/queries.jsonl --mode all "${MT_SAMPLE[@]}"
run metatool_candidates  --tools $D/metatool/tools.jsonl --queries $D/metatool/queries.jsonl --mode all --candidates
run metatool_reliability --tools $D/metatool/tools.jsonl --queries $D/metatool/queries_reliability.jsonl --mode all --candidates
run metatool_awareness   --tools $D/metatool/tools.jsonl --queries $D/metatool/queries_awareness.jsonl --mode all
run bfcl_candidates      --tools $D/bfcl_multiple/tools.jsonl --queries $D/bfcl_multiple/queries.jsonl --mode all --candidates
run bfcl_global          --tools $D/bfcl_multiple/tools.jsonl --queries $D/bfcl_multiple/queries.jsonl --mode all --match-by-name
run sealtools_global     --tools $D/sealtools/tools.jsonl --queries $D/sealtools/queries.jsonl --mode all
# The datasets' BM25 reference (name + description, one text per request,
# no exact-name guarantee):
# reproduces each README.txt baseline within +-0.03.
REF=(--mode lexical --no-steps --no-exact-names --lexical-fields name,description --label bm25-ref)
run metatool_global_ref  --tools $D/metatool/tools.jsonl --queries $D/metatool/queries.jsonl "${REF[@]}" "${MT_SAMPLE[@]}"
run metatool_cand_ref    --tools $D/metatool/tools.jsonl --queries $D/metatool/queries.jsonl "${REF[@]}" --candidates
run bfcl_candidates_ref  --tools $D/bfcl_multiple/tools.jsonl --queries $D/bfcl_multiple/queries.jsonl "${REF[@]}" --candidates
run bfcl_global_ref      --tools $D/bfcl_multiple/tools.jsonl --queries $D/bfcl_multiple/queries.jsonl "${REF[@]}" --match-by-name
run sealtools_global_ref --tools $D/sealtools/tools.jsonl --queries $D/sealtools/queries.jsonl "${REF[@]}" --plot "$R/accuracy.svg"
echo "wrote $R/"
