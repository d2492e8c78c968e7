#!/usr/bin/env python3
"""The stack a Python user would otherwise run, on the same catalog and
queries (scripts/perf.sh runs it beside toolgraph): all-MiniLM-L6-v2 int8
through onnxruntime + the HF tokenizer (the same model files toolgraph
uses), numpy cosine over the catalog matrix, rank-bm25 (BM25Okapi) over
name + description + parameter names, fused as cosine + bm25 / max bm25,
top 10 by argpartition — what a langgraph-bigtool or LlamaIndex retriever
does. The catalog embedding is not timed; each query is (embedding + both
scores + top 10), one at a time, as a planner calls it.

usage: peer.py MODEL_DIR TOOLS.jsonl QUERIES.jsonl [MAX_QUERIES]
prints one JSON line: qps, p50_ms, p99_ms, top1, recall_at_10.
"""
import json
import re
import sys
import time

import numpy as np
import onnxruntime as ort
from rank_bm25 import BM25Okapi
from tokenizers import Tokenizer


def split_name(name):
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return re.sub(r"[_\-.]+", " ", name).lower()


def tool_text(t):
    params = (t.get("parameters") or {}).get("properties") or {}
    parts = [split_name(t["name"]), t.get("description", "")]
    for k, v in params.items():
        parts.append(split_name(k) + " " + (v.get("description", "") if isinstance(v, dict) else ""))
    return ". ".join(p for p in parts if p)


def words(text):
    return re.findall(r"[a-z0-9]+", text.lower())


class MiniLM:
    def __init__(self, model_dir):
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 2
        self.session = ort.InferenceSession(f"{model_dir}/model.onnx", opts, providers=["CPUExecutionProvider"])
        self.tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
        self.tok.enable_truncation(256)
        self.inputs = {i.name for i in self.session.get_inputs()}

    def embed(self, texts):
        self.tok.enable_padding()
        enc = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        out = self.session.run(None, feed)[0]
        m = mask[..., None].astype(np.float32)
        pooled = (out * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def main():
    model_dir, tools_file, queries_file = sys.argv[1:4]
    limit = int(sys.argv[4]) if len(sys.argv) > 4 else 500
    tools = [json.loads(l) for l in open(tools_file) if l.strip()]
    seen, queries = set(), []
    for l in open(queries_file):
        if not l.strip():
            continue
        q = json.loads(l)
        if q["query"] not in seen:
            seen.add(q["query"])
            queries.append(q)
    queries = queries[:limit]
    model = MiniLM(model_dir)
    texts = [tool_text(t) for t in tools]
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    matrix = np.zeros((len(texts), 384), dtype=np.float32)
    for s in range(0, len(order), 64):
        idx = order[s:s + 64]
        matrix[idx] = model.embed([texts[i] for i in idx])
    bm25 = BM25Okapi([words(split_name(t["name"]) + " " + t.get("description", "")) for t in tools])
    ids = [t.get("id", t["name"]) for t in tools]
    latencies, top1, recall = [], 0, 0
    for q in queries:
        start = time.perf_counter()
        v = model.embed([q["query"]])[0]
        cos = matrix @ v
        lex = bm25.get_scores(words(q["query"]))
        best = lex.max()
        fused = cos + (lex / best if best > 0 else 0)
        top = np.argpartition(-fused, 10)[:10]
        top = top[np.argsort(-fused[top])]
        latencies.append((time.perf_counter() - start) * 1000)
        names = [ids[i] for i in top]
        top1 += names[0] == q["gold"][0]
        recall += q["gold"][0] in names
    latencies.sort()
    n = len(latencies)
    print(json.dumps({
        "queries": n,
        "qps": round(1000 * n / sum(latencies), 1),
        "p50_ms": round(latencies[n // 2], 3),
        "p99_ms": round(latencies[min(n - 1, round((n - 1) * 0.99))], 3),
        "top1": round(top1 / n, 3),
        "recall_at_10": round(recall / n, 3),
    }))


if __name__ == "__main__":
    main()
