"""How often the dense first pass (q·sign(r), rank/dense.rs) keeps a
query's exact top-10 among the tools it picks, on real MiniLM vectors,
with the signs of the raw rows and of the rows rotated as the engine does:
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


M64 = (1 << 64) - 1


def rotation(dim, rounds=3, seed=0x74675F726F746174):
    """The engine's fixed rotation (src/embed/index/rotate.rs): per round,
    sign flips, a Walsh-Hadamard transform over blocks of the largest power
    of two dividing dim, a permutation; the same SplitMix64 sequence."""
    state = seed

    def nxt():
        nonlocal state
        state = (state + 0x9E3779B97F4A7C15) & M64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    block = 1 << min((dim & -dim).bit_length() - 1, 12)
    h = np.array([[1.0]])
    while h.shape[0] < block:
        h = np.block([[h, h], [h, -h]])
    h = h / np.sqrt(block)
    steps = []
    for _ in range(rounds):
        flips = np.array([1.0 if nxt() & 1 == 0 else -1.0 for _ in range(dim)])
        perm = list(range(dim))
        for i in range(dim - 1, 0, -1):
            j = nxt() % (i + 1)
            perm[i], perm[j] = perm[j], perm[i]
        steps.append((flips, np.array(perm)))

    def apply(V):
        V = V.copy()
        for flips, perm in steps:
            V = V * flips
            V = np.concatenate([V[:, i:i + block] @ h for i in range(0, dim, block)], axis=1)
            out = np.empty_like(V)
            out[:, perm] = V
            V = out
        return V
    return apply


def report(name, X, Q, picks, head=None):
    exact = top(Q @ X.T, 10)
    rotate = rotation(X.shape[1])
    for how, (Xs, Qs) in [("raw signs", (X, Q)), ("rotated signs", (rotate(X), rotate(Q)))]:
        S = np.where(Xs > 0, 1.0, -1.0)
        signed = Qs @ S.T
        for pick in picks:
            found = [len(set(a) & set(b)) / 10 for a, b in zip(top(signed, pick), exact)]
            print(f"{name}, {how}: {len(X)} tools, {len(Q)} queries, pick {pick}: recall@10 "
                  f"mean {np.mean(found):.4f}, worst {min(found):.2f}, "
                  f"{sum(f == 1.0 for f in found)} queries with all 10")
            if head is None or how == "raw signs":
                continue
            # Two stages: the first `bits` rotated signs pick `wide` rows,
            # all of them pick `pick` among those.
            bits, wide = head
            if wide == 0:
                alone = top(Qs[:, :bits] @ S[:, :bits].T, pick)
                found = [len(set(a) & set(b)) / 10 for a, b in zip(alone, exact)]
                print(f"{name}, {how}, first {bits} bits alone pick {pick}: recall@10 "
                      f"mean {np.mean(found):.4f}, worst {min(found):.2f}, "
                      f"{sum(f == 1.0 for f in found)} queries with all 10")
                continue
            first = top(Qs[:, :bits] @ S[:, :bits].T, wide)
            found = []
            for q, rows, want in zip(range(len(Q)), first, exact):
                full = signed[q, rows]
                kept = rows[np.argpartition(-full, min(pick, len(rows) - 1))[:pick]]
                found.append(len(set(kept) & set(want)) / 10)
            print(f"{name}, {how}, first {bits} bits pick {wide} then {pick}: recall@10 "
                  f"mean {np.mean(found):.4f}, worst {min(found):.2f}, "
                  f"{sum(f == 1.0 for f in found)} queries with all 10")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("datasets", nargs="*")
    ap.add_argument("--store")
    ap.add_argument("--queries")
    ap.add_argument("--pick", type=int, action="append")
    ap.add_argument("--head", help="BITS,WIDE: a first stage over the first BITS rotated signs")
    ap.add_argument("--bits", type=int, help="only the first BITS rotated signs (no second stage)")
    args = ap.parse_args()
    head = tuple(int(x) for x in args.head.split(",")) if args.head else None
    if args.bits:
        head = (args.bits, 0)
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
        report(os.path.basename(args.store.rstrip("/")), X, embed(model, queries),
               args.pick or [4096, 2048], head)


if __name__ == "__main__":
    main()
