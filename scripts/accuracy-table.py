#!/usr/bin/env python3
"""Prints the README accuracy table from benches/results/all.jsonl
(written by scripts/eval-all.sh). Bold = joint; bm25-ref = the datasets'
reference BM25 (name + description, one text per request)."""
import json, sys

path = sys.argv[1] if len(sys.argv) > 1 else "benches/results/all.jsonl"
reports = [json.loads(l) for l in open(path) if l.strip()]
modes = ["joint", "graph", "dense", "lexical", "bm25-ref"]
by = {}
order = []
for r in reports:
    key = (r["dataset"], r["setting"])
    if key not in by:
        by[key] = {}
        order.append(key)
    by[key][r["mode"]] = r
TAGS = {"metatool": ["similar", "multi"], "bfcl_multiple": ["sibling", "multi"],
        "sealtools": ["multi"], "metatool/awareness": ["positive"]}

def fmt(v):
    return "-" if v is None else f"{v:.3f}"

print("| dataset | setting | tag | n | " + " | ".join(modes) + " | metric |")
print("|---|---|---|---|" + "---|" * len(modes) + "---|")
for key in order:
    ms = by[key]
    joint = ms.get("joint")
    if joint is None:
        continue
    groups = [("ALL", lambda r: r["overall"])]
    for t in TAGS.get(key[0], []):
        if t in joint["per_tag"]:
            groups.append((t, lambda r, t=t: r["per_tag"].get(t)))
    for tag, get in groups:
        g = get(joint)
        ranked = g["n"] - g.get("n_empty_gold", 0)
        metrics = ["abstain_rate"] if g.get("top1") is None or ranked == 0 else ["top1", "ndcg10"]
        if g.get("abstain_rate") is not None and "abstain_rate" not in metrics:
            metrics.append("abstain_rate")
        for metric in metrics:
            cells = []
            for m in modes:
                r = ms.get(m)
                v = get(r).get(metric) if r and get(r) else None
                cells.append(f"**{fmt(v)}**" if m == "joint" else fmt(v))
            n = g["n_empty_gold"] if metric == "abstain_rate" else g["n"] - g.get("n_empty_gold", 0)
            print(f"| {key[0]} | {key[1]} | {tag} | {n} | " + " | ".join(cells) + f" | {metric} |")
    if joint["overall"].get("coverage") is not None and joint["overall"].get("abstain_rate") is not None and joint["overall"].get("top1") is not None:
        cells = [f"**{fmt(joint['overall']['coverage'])}**"] + [fmt(ms[m]["overall"].get("coverage")) if m in ms else "-" for m in modes[1:]]
        print(f"| {key[0]} | {key[1]} | coverage of positives | {joint['overall']['n'] - joint['overall']['n_empty_gold']} | " + " | ".join(cells) + " | coverage |")
