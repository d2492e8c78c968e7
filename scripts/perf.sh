#!/usr/bin/env bash
# The whole performance measurement on this machine, written to
# benches/results/perf.json (and printed):
#   1. the engine (benches/perf.rs): synthetic catalogs of 1k / 10k / 100k
#      tools registered into on-disk stores under $TOOLGRAPH_PERF_DIR
#      (default ~/.cache/toolgraph/perf; embeddings are kept there, so a
#      second run re-embeds nothing), search latency cold and warm, the
#      query-embedding floor, registration vs raw embedding throughput; and
#      a million tools (stand-in tool vectors, the real model per query);
#   2. a 60 s loopback load test (benches/load.rs) against `toolgraph serve`
#      on the 10k and the 100k store: QPS, p50/p99, errors, RSS before/after;
#      plus Seal-Tools' multi-step requests against the embedding of their
#      own texts, and 10k searches paced 5 ms apart against back to back;
#   3. the Python peer (benches/peer.py: onnxruntime + numpy + rank-bm25) on
#      the 10k catalog and the same queries, in the same run.
# Usage: scripts/perf.sh            (TOOLGRAPH_PERF_SIZES=1000,10000 TOOLGRAPH_PERF_MILLION=0 for a quick run;
#                                    TOOLGRAPH_LOAD_SECONDS=60 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export TOOLGRAPH_MODEL_DIR="${TOOLGRAPH_MODEL_DIR:-$HOME/.cache/toolgraph/models/all-MiniLM-L6-v2-int8}"
export TOOLGRAPH_PERF_DIR="${TOOLGRAPH_PERF_DIR:-$HOME/.cache/toolgraph/perf}"
export TOOLGRAPH_PERF_SIZES="${TOOLGRAPH_PERF_SIZES:-1000,10000,100000}"
# The million-tool catalog (benches/perf/million.rs: stand-in tool vectors,
# the real model on every query): registered once into the perf directory
# (the first time about an hour on an idle machine: each 100k chunk costs more than the one
# before, since a load still reads the whole store back: 104, 177, 219 s for the first three),
# then opened and searched on every run.
# TOOLGRAPH_PERF_MILLION=0 leaves it out (its keys are then null); =quick measures its cold
# latency and recall alone (a diagnostic: no warm runs, no memory).
export TOOLGRAPH_PERF_MILLION="${TOOLGRAPH_PERF_MILLION:-1}"
SECONDS_LOAD="${TOOLGRAPH_LOAD_SECONDS:-60}"
TARGET="${CARGO_TARGET_DIR:-target}"
OUT=benches/results/perf.json
WORK="$TARGET/perf"
mkdir -p "$WORK" "$TOOLGRAPH_PERF_DIR"
# Nothing from an earlier run is read as this run's.
rm -f "$WORK"/engine.json "$WORK"/load-*.json "$WORK"/peer.json "$WORK"/bolt.json

# The peer's Python stack, pinned, in its own virtualenv.
PEER_ENV="${TOOLGRAPH_PEER_ENV:-$HOME/.cache/toolgraph/peerenv}"
PEER_PINS=("numpy==2.4.6" "onnxruntime==1.32.0" "rank-bm25==0.2.2" "tokenizers==0.23.3")
if ! { [ -f "$PEER_ENV/.complete" ] && [ "$(cat "$PEER_ENV/.complete")" = "${PEER_PINS[*]}" ]; }; then
  python3 -m venv "$PEER_ENV"
  "$PEER_ENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PEER_PINS[@]}"
  echo "${PEER_PINS[*]}" >"$PEER_ENV/.complete"
fi

cargo build --release --quiet
cargo bench --bench perf --bench load --no-run --quiet 2>/dev/null
BIN="$TARGET/release/toolgraph"
LOAD_BIN="$(ls -t "$TARGET"/release/deps/load-* | grep -v '\.d$' | head -1)"

echo "perf: engine (sizes $TOOLGRAPH_PERF_SIZES)" >&2
TOOLGRAPH_PERF_OUT="$WORK/engine.json" cargo bench --quiet --bench perf >/dev/null

rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

IFS=',' read -r -a sizes <<<"$TOOLGRAPH_PERF_SIZES"
for n in "${sizes[@]}"; do
  [ "$n" -ge 10000 ] || continue
  # The same tools (same seed), 20,000 queries: every load-test request is a
  # distinct text, so the query-embedding cache does not answer for the model.
  "$BIN" synth --tools "$n" --queries 20000 --seed 7 --out "$WORK/load-$n" >/dev/null
  cmp -s "$WORK/load-$n/tools.jsonl" "$TOOLGRAPH_PERF_DIR/synth-$n-7/tools.jsonl" ||
    { echo "perf: the load-test catalog differs from the measured one" >&2; exit 1; }
  port="$(free_port)"
  "$BIN" --data "$TOOLGRAPH_PERF_DIR/store-$n" serve --addr "127.0.0.1:$port" >"$WORK/serve-$n.log" 2>&1 &
  pid=$!
  trap 'kill $pid 2>/dev/null || true' EXIT
  for _ in $(seq 1 600); do
    curl -sf "127.0.0.1:$port/readyz" >/dev/null && break
    sleep 1
  done
  curl -sf "127.0.0.1:$port/readyz" >/dev/null || { echo "perf: serve did not get ready (see $WORK/serve-$n.log)" >&2; exit 1; }
  # Warm-up: 10 s at the measured concurrency on the last 4,000 query texts
  # (every worker thread, allocator heap and ONNX Runtime arena reaches its
  # working size), then RSS, then the measured run on the other 16,000.
  tail -n 4000 "$WORK/load-$n/queries.jsonl" >"$WORK/load-$n/warmup.jsonl"
  head -n 16000 "$WORK/load-$n/queries.jsonl" >"$WORK/load-$n/measured.jsonl"
  TOOLGRAPH_LOAD_ADDR="127.0.0.1:$port" TOOLGRAPH_LOAD_QUERIES="$WORK/load-$n/warmup.jsonl" \
    TOOLGRAPH_LOAD_SECONDS=10 TOOLGRAPH_LOAD_CONNECTIONS=4 "$LOAD_BIN" >/dev/null
  before="$(rss_kb $pid)"
  echo "perf: load test on $n tools, ${SECONDS_LOAD}s" >&2
  # RSS once a second while the load runs: a leak is a trend, not the
  # difference of two samples the allocator moves by tens of MB.
  : >"$WORK/rss-$n.txt"
  (while kill -0 "$pid" 2>/dev/null; do rss_kb "$pid" >>"$WORK/rss-$n.txt" || true; sleep 1; done) &
  sampler=$!
  TOOLGRAPH_LOAD_ADDR="127.0.0.1:$port" TOOLGRAPH_LOAD_QUERIES="$WORK/load-$n/measured.jsonl" \
    TOOLGRAPH_LOAD_SECONDS="$SECONDS_LOAD" TOOLGRAPH_LOAD_CONNECTIONS=4 "$LOAD_BIN" >"$WORK/load-$n.json"
  after="$(rss_kb $pid)"
  kill "$sampler" 2>/dev/null || true; wait "$sampler" 2>/dev/null || true
  kill "$pid"; wait "$pid" 2>/dev/null || true
  trap - EXIT
  python3 - "$WORK/load-$n.json" "$before" "$after" "$WORK/rss-$n.txt" <<'EOF'
import json, statistics, sys
p, before, after = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
samples = [int(l) for l in open(sys.argv[4]) if l.strip().isdigit()]
d = json.load(open(p))
# Growth = RSS after the run over RSS before it (after the warm-up); the
# once-a-second samples give the trend (median of the last 10 s over the
# first 10 s) and the peak beside it.
first, last = samples[:10] or [before], samples[-10:] or [after]
trend = (statistics.median(last) - statistics.median(first)) / statistics.median(first)
d.update(rss_before_kb=before, rss_after_kb=after, rss_samples=len(samples),
         rss_first_10s_median_kb=int(statistics.median(first)),
         rss_last_10s_median_kb=int(statistics.median(last)),
         rss_peak_kb=max(samples + [after]),
         rss_trend=round(trend, 4),
         rss_growth=round((after - before) / before, 4))
json.dump(d, open(p, "w"))
EOF
done

echo "perf: Python peer on 10,000 tools" >&2
if [ -f "$TOOLGRAPH_PERF_DIR/synth-10000-7/tools.jsonl" ]; then
  "$PEER_ENV/bin/python" benches/peer.py "$TOOLGRAPH_MODEL_DIR" \
    "$TOOLGRAPH_PERF_DIR/synth-10000-7/tools.jsonl" "$TOOLGRAPH_PERF_DIR/synth-10000-7/queries.jsonl" >"$WORK/peer.json"
fi

# The graph server (benches/perf/bolt.rs): ArcadeDB with its Bolt plugin on
# loopback, an empty database, the largest catalog registered into it, its
# vectors put there, a replica opened with the model. TOOLGRAPH_PERF_BOLT=0
# leaves it out. The JVM heap holds the one transaction of a registration
# (3.1M statements at 100k) beside this process (8.9 GB at its peak then):
# TOOLGRAPH_PERF_BOLT_HEAP, 10g by default.
rm -f "$WORK/bolt.json"
if [ "${TOOLGRAPH_PERF_BOLT:-1}" != 0 ]; then
  scripts/setup-bolt.sh >/dev/null
  bolt_root="$WORK/bolt-root"
  rm -rf "$bolt_root"
  bolt_port="$(free_port)"; bolt_http="$(free_port)"
  export TOOLGRAPH_GRAPH_PASSWORD="perf-$RANDOM-$RANDOM"
  TOOLGRAPH_BOLT_HEAP="${TOOLGRAPH_PERF_BOLT_HEAP:-10g}" scripts/bolt-server.sh \
    --bolt-port "$bolt_port" --http-port "$bolt_http" --root "$bolt_root" --database perf \
    >"$WORK/bolt-server.log" 2>&1 &
  bolt_pid=$!
  trap 'kill $bolt_pid 2>/dev/null || true' EXIT
  for _ in $(seq 1 120); do
    curl -sf -u "root:$TOOLGRAPH_GRAPH_PASSWORD" "127.0.0.1:$bolt_http/api/v1/exists/perf" 2>/dev/null | grep -q true && break
    sleep 1
  done
  echo "perf: graph server (ArcadeDB) on the largest catalog" >&2
  # A second database for the bench's warm-up registration (benches/perf/bolt.rs).
  curl -sf -u "root:$TOOLGRAPH_GRAPH_PASSWORD" -X POST "127.0.0.1:$bolt_http/api/v1/server" \
    -d '{"command":"create database warmup"}' >/dev/null
  TOOLGRAPH_PERF_BOLT_WARMUP_DATABASE=warmup \
  TOOLGRAPH_PERF_BOLT="bolt://127.0.0.1:$bolt_port" TOOLGRAPH_PERF_BOLT_DATABASE=perf \
    TOOLGRAPH_PERF_OUT="$WORK/bolt.json" cargo bench --quiet --bench perf >/dev/null ||
    echo "perf: the graph-server run failed (see $WORK/bolt-server.log)" >&2
  kill "$bolt_pid" 2>/dev/null || true; wait "$bolt_pid" 2>/dev/null || true
  trap - EXIT
  rm -rf "$bolt_root"
fi

python3 - "$WORK" "$OUT" <<'EOF'
import json, os, sys
work, out = sys.argv[1], sys.argv[2]
def read(name):
    p = os.path.join(work, name)
    return json.load(open(p)) if os.path.exists(p) else None
engine = read("engine.json")
load = {n: read(f"load-{n}.json") for n in ("10000", "100000")}
peer = read("peer.json")
report = {k: engine.get(k) for k in (
    "e2e_p50_over_embed_p50_10k", "e2e_p99_over_embed_p50_10k", "p50_100k_over_p50_1k",
    "register_over_embed_throughput", "reembedded_on_unchanged_reload",
    "recall_at_10_vs_exact_100k", "multistep_p50_over_steps_embed_p50",
    "multistep_p99_over_steps_embed_p50", "paced_p50_over_back_to_back_p50",
    "register_fresh_s", "open_s",
    "p50_1m_over_p50_1k", "recall_at_10_vs_exact_1m", "memory_per_tool_kb_1m")}
# The graph server against the embedded store, same catalog, same run.
bolt = (read("bolt.json") or {}).get("bolt")
fresh = engine.get("fresh") or {}
at_100k = bool(bolt) and bolt["tools"] == 100000
report["bolt_register_100k_over_embedded"] = (
    round(bolt["register_s"] / fresh["register_s"], 3)
    if at_100k and fresh.get("register_s") and fresh.get("tools") == bolt["tools"] else None)
report["bolt_replica_open_100k_s"] = bolt["replica_open_s"] if at_100k else None
report["bolt_reembedded_on_replica_open_100k"] = bolt["embedded_on_open"] if at_100k else None
measured = [l for l in load.values() if l]
report["load_errors"] = sum(l["errors"] for l in measured) if measured else None
report["load_rss_growth"] = max(l["rss_growth"] for l in measured) if measured else None
report["qps_over_python_peer"] = (
    round(load["10000"]["qps"] / peer["qps"], 3) if load.get("10000") and peer else None)
l10, l100 = load.get("10000"), load.get("100000")
report["memory_per_tool_kb"] = (
    round((l100["rss_after_kb"] - l10["rss_after_kb"]) / 90000, 2) if l10 and l100 else None)
report["engine"] = engine
report["load"] = load
report["python_peer"] = peer
report["bolt"] = bolt
os.makedirs(os.path.dirname(out), exist_ok=True)
json.dump(report, open(out, "w"), indent=2)
print(json.dumps({k: v for k, v in report.items() if k not in ("engine", "load", "python_peer", "bolt")}, indent=2))
EOF
