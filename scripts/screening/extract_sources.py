#!/usr/bin/env python3
"""Extracts the public tool descriptions screening is trained and measured
on into tests/fixtures/screening/sources/ (run once; its output is
committed with each source's license, see ../README.txt).

  scripts/screening/extract_sources.py MSB_CHECKOUT MCPSECBENCH_CHECKOUT ../shared/datasets

MSB (dongsenzhang/MSB, MIT): the tools of its six attack servers, the
clean server file against each attack variant; a tool whose docstring or
parameters differ from the clean file's is poisoned, with MSB's variant
name as its family. MCPSecBench (AIS2Lab/MCPSecBench, MIT): its servers'
tools, labelled by hand below (the benchmark names the attack per server,
not per tool).
"""
import ast, json, pathlib, subprocess, sys

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests/fixtures/screening/sources"

def tools_of(repo, path):
    src = subprocess.check_output(["git", "-C", repo, "show", "HEAD:" + path]).decode()
    out = []
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            "tool" in ast.unparse(d) for d in node.decorator_list
        ):
            out.append({
                "name": node.name,
                "description": ast.get_docstring(node, clean=False) or "",
                "params": [a.arg for a in node.args.args if a.arg not in ("self", "ctx")],
            })
    return out

def commit(repo):
    return subprocess.check_output(["git", "-C", repo, "rev-parse", "HEAD"]).decode().strip()

def msb(repo):
    files = subprocess.check_output(
        ["git", "-C", repo, "ls-tree", "-r", "--name-only", "HEAD", "data/tools/attack_tools"]
    ).decode().split()
    rows, seen_clean = [], set()
    for f in files:
        if not f.endswith(".py") or "-" not in pathlib.Path(f).name:
            continue
        stem, variant = pathlib.Path(f).stem.split("-", 1)
        clean_path = str(pathlib.Path(f).with_name(stem + ".py"))
        if clean_path not in files:
            continue
        clean = {t["name"]: t for t in tools_of(repo, clean_path)}
        if clean_path not in seen_clean:
            seen_clean.add(clean_path)
            for t in clean.values():
                rows.append({**t, "label": 0, "family": None, "origin": f"MSB:{clean_path}"})
        for t in tools_of(repo, f):
            before = clean.get(t["name"])
            if before and before["description"] == t["description"] and before["params"] == t["params"]:
                continue
            if variant in ("name_overlap", "tool_transfer"):
                # name_overlap: the attack is the name alone (screened as a
                # name collision); tool_transfer: in the tool's output.
                continue
            if not before:
                # No clean counterpart to compare with (the Word server
                # registers its clean tools elsewhere): unlabelled, left out.
                continue
            # The family from what changed (a variant file may carry both).
            families = []
            if before["description"] != t["description"]:
                families.append("preference")
            if set(t["params"]) - set(before["params"]):
                families.append("out_of_scope_parameter")
            if not families:
                continue
            rows.append({**t, "label": 1, "family": "+".join(families), "origin": f"MSB:{f}"})
    return rows

# MCPSecBench: (file, tool) -> family; the rest of its tools are clean.
MCPSEC_POISONED = {
    ("code/maliciousadd.py", "add"): "preference",
    ("code/maliciousadd.py", "modify"): "cross_tool",
    ("code/maliciousadd.py", "times"): "out_of_scope_parameter",
    ("code/maliciousadd.py", "m_check"): "preference",
    ("code/maliciousadd.py", "aft_check"): "cross_tool",
}
MCPSEC_SKIP = {("code/maliciousadd.py", "show_credentials")}

def mcpsec(repo):
    rows = []
    for f in ["code/maliciousadd.py", "code/squatting.py", "code/addserver.py"]:
        for t in tools_of(repo, f):
            key = (f, t["name"])
            if key in MCPSEC_SKIP:
                continue
            fam = MCPSEC_POISONED.get(key)
            rows.append({**t, "label": int(fam is not None), "family": fam, "origin": f"MCPSecBench:{f}"})
    return rows

def main():
    msb_repo, mcpsec_repo = sys.argv[1], sys.argv[2]
    for name, repo, rows in [("msb", msb_repo, msb(msb_repo)), ("mcpsecbench", mcpsec_repo, mcpsec(mcpsec_repo))]:
        with open(OUT / f"{name}.jsonl", "w") as w:
            for r in rows:
                w.write(json.dumps(r, ensure_ascii=False) + "\n")
        print(name, commit(repo), len(rows), "tools,", sum(r["label"] for r in rows), "poisoned")

if __name__ == "__main__":
    main()

def shared(datasets):
    """The catalogs in ../shared/datasets (MetaTool MIT, BFCL and Seal-Tools
    Apache-2.0): name, description (MetaTool's model-facing description as a
    second text of the same tool) and input schema."""
    for name in ["metatool", "bfcl_multiple", "sealtools"]:
        src = pathlib.Path(datasets) / name
        with open(OUT / f"{name}.jsonl", "w") as w:
            n = 0
            for line in open(src / "tools.jsonl"):
                t = json.loads(line)
                row = {"name": t["name"], "description": t.get("description") or "",
                       "inputSchema": t.get("parameters")}
                w.write(json.dumps(row, ensure_ascii=False) + "\n")
                n += 1
                model = (t.get("meta") or {}).get("description_for_model")
                if model:
                    w.write(json.dumps({**row, "description": model, "text": "description_for_model"}, ensure_ascii=False) + "\n")
                    n += 1
        (OUT / f"{name}.LICENSE").write_text((src / "LICENSE.txt").read_text())
        print(name, n, "texts")

if __name__ == "__main__" and len(sys.argv) > 3:
    shared(sys.argv[3])
