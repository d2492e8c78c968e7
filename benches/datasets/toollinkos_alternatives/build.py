#!/usr/bin/env python3
"""The alternative-producers stress set (python3 build.py, deterministic).

ToolLinkOS declares one producer per parameter edge. Here every tool that
needs a parameter some other tools of the catalog also produce (by the
catalog's own declared edges: session_id has 29 producers, the airlines',
shops' and gyms' logins; email 4; recipe_id 3 ...) declares all of them as
alternative producers of that parameter, as a real catalog does ("a session
any login makes"). The queries and their gold are ToolLinkOS' unchanged: the
request still says which one fits ("my Delta flight": delta_user_login).
Licence: MIT, as ToolLinkOS (LICENSE.txt).
"""
import json
import shutil
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "toollinkos"


def main():
    tools = [json.loads(l) for l in open(SRC / "tools.jsonl") if l.strip()]
    producers = defaultdict(set)
    for t in tools:
        for d in t["meta"]["depends_on"]:
            if d.get("parameter_name"):
                producers[d["parameter_name"]].add(d["name"])
    added = 0
    for t in tools:
        deps = t["meta"]["depends_on"]
        have = {(d["name"], d.get("parameter_name")) for d in deps}
        extra = []
        for d in deps:
            p = d.get("parameter_name")
            if not p:
                continue
            for other in sorted(producers[p]):
                if other != t["id"] and (other, p) not in have:
                    have.add((other, p))
                    extra.append({
                        "name": other,
                        "dependence_type": d["dependence_type"],
                        "parameter_name": p,
                        "reason": f"Another producer of {p}.",
                    })
        deps.extend(extra)
        added += len(extra)
    with open(HERE / "tools.jsonl", "w") as f:
        for t in tools:
            f.write(json.dumps(t) + "\n")
    shutil.copy(SRC / "queries.jsonl", HERE / "queries.jsonl")
    shutil.copy(SRC / "LICENSE.txt", HERE / "LICENSE.txt")
    print(f"{len(tools)} tools, {added} alternative-producer edges added")


if __name__ == "__main__":
    main()
