"""How often the dense first pass (q·sign(r), rank/dense.rs) keeps a
query's exact top-10 among the tools it picks, on real MiniLM vectors:
the offline check behind `RankConfig::dense_first_pass` (README,
Performance). Not part of scripts/perf.sh, which measures the engine's
own answers against the exact scan (`recall_at_10_vs_exact`).

  python3 benches/sign_recall.py benches/datasets/sealtools ...
      each dataset's tools embedded here (peer.py's text and model),
      500 of its queries, picking 4.1 % of the tools;
  python3 benches/sign_recall.py --store ~/.cache/toolgraph/perf/store-100000 \
      --queries ~/.cache/toolgraph/perf/synth-100000-7/queries.jsonl
      the vectors toolgraph stored for a catalog, picking 4,096 and 2,048.

Needs numpy, onnxruntime, tokenizers and TOOLGRAPH_MODEL_DIR (the peer's
environment, set up by scripts/perf.sh).
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer  # noqa: E402


def embed(model, texts):
    return np.concatenate([model.embed(texts[i:i + 64]) for i in range(0, len(texts), 64)])


def top(scores, k):
    return np.argpartition(-scores, min(k, scores.shape[1] - 1), axis=1)[:, :k]


def report(name, X, Q, picks):
    exact = top(Q @ X.T, 10)
    signed = Q @ np.where(X > 0, 1.0, -1.0).T
    for pick in picks:
        found = [len(set(a) & set(b)) / 10 for a, b in zip(top(signed, pick), exact)]
        print(f"{name}: {len(X)} tools, {len(Q)} queries, pick {pick}: recall@10 "
              f"mean {np.mean(found):.4f}, worst {min(found):.2f}, "
              f"{sum(f == 1.0 for f in found)} queries with all 10")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("datasets", nargs="*")
    ap.add_argument("--store")
    ap.add_argument("--queries")
    args = ap.parse_args()
    model = peer.MiniLM(os.environ["TOOLGRAPH_MODEL_DIR"])
    rng = np.random.default_rng(1)
    for d in args.datasets:
        tools = [json.loads(line) for line in open(f"{d}/tools.jsonl")]
        queries = [json.loads(line)["query"] for line in open(f"{d}/queries.jsonl")]
        queries = [queries[i] for i in rng.choice(len(queries), min(500, len(queries)), replace=False)]
        X = embed(model, [peer.tool_text(t) for t in tools])
        report(os.path.basename(d.rstrip("/")), X, embed(model, queries),
               [max(round(len(tools) * 4096 / 100_180), 20)])
    if args.store:
        raw = open(f"{args.store}/vectors/vectors.bin", "rb").read()
        dim = int.from_bytes(raw[8:12], "little")
        n = int.from_bytes(raw[16:24], "little")
        X = np.frombuffer(raw[24:], dtype=np.float32).reshape(n, dim)
        X = X / np.linalg.norm(X, axis=1, keepdims=True)
        queries = [json.loads(line)["query"] for line in open(args.queries)][:500]
        report(os.path.basename(args.store.rstrip("/")), X, embed(model, queries), [4096, 2048])


if __name__ == "__main__":
    main()
