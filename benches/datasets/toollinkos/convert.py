#!/usr/bin/env python3
"""Converts ToolLinkOS (github EliasLumer/Graph-RAG-Tool-Fusion-ToolLinkOS,
toollinkos/{core_tools,regular_tools,instances}.json) to the harness format.

    python3 convert.py SRC_DIR OUT_DIR

tools.jsonl  : {"id","name","description","parameters"(JSON schema),"source",
                "meta": {"depends_on": [{name, dependence_type, parameter_name, reason}],
                         "tags": [core|regular]}}
queries.jsonl: {"id","query","gold","primary","split","tags"}; gold is the
               instance's golden_function_names (the main tool and what it
               needs), primary its main_golden_function_name.
Deterministic: the same input gives byte-identical output.
"""
import json
import sys
from pathlib import Path


def schema(params):
    props, required = {}, []
    for p in params or []:
        prop = {"type": p.get("type") or "string", "description": p.get("description") or ""}
        for k in ("enum", "default", "items"):
            if p.get(k) is not None:
                prop[k] = p[k]
        props[p["name"]] = prop
        if p.get("required"):
            required.append(p["name"])
    return {"type": "object", "properties": props, "required": required}


def main(src, out):
    src, out = Path(src), Path(out)
    tools = []
    for f in ("core_tools.json", "regular_tools.json"):
        tools += json.loads((src / f).read_text())
    names = {t["name"] for t in tools}
    with open(out / "tools.jsonl", "w") as w:
        for t in tools:
            deps = []
            for d in t.get("depends_on") or []:
                if d["name"] not in names:
                    continue
                deps.append({k: d.get(k) for k in ("name", "dependence_type", "parameter_name", "reason")})
            line = {
                "id": t["name"],
                "name": t["name"],
                "description": t.get("description") or "",
                "parameters": schema(t.get("parameters")),
                "source": "toollinkos",
                "meta": {"depends_on": deps, "tags": [t.get("func_type") or "regular"]},
            }
            w.write(json.dumps(line, ensure_ascii=False) + "\n")
    instances = json.loads((src / "instances.json").read_text())
    with open(out / "queries.jsonl", "w") as w:
        for i, q in enumerate(instances):
            gold = list(dict.fromkeys(q["golden_function_names"]))
            n = len(gold) - 1
            size = "deps-0-3" if n <= 3 else "deps-4-6" if n <= 6 else "deps-7+"
            line = {
                "id": f"toollinkos-{i}",
                "query": q["user_query"],
                "gold": gold,
                "primary": q["main_golden_function_name"],
                "split": "test",
                "tags": ["toollinkos", size],
            }
            w.write(json.dumps(line, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
