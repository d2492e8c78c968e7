#!/usr/bin/env python3
"""Builds the multi-turn dev sets (queries_multiturn.jsonl) over the shared
Seal-Tools and MetaTool catalogs, deterministically (python3 multiturn.py).

Every query is a later turn of a conversation; `context` holds the earlier
turns, oldest first, one a line (as a planner passes them). Kinds (tags):
  followup-same-tool  "What about Paris?" after a request: the earlier
                      request's tool (the turn alone names nothing);
  followup-new-verb   "Now cancel it." after a request for createEvent: the
                      catalog's tool doing the new verb to the same thing
                      (Seal-Tools only: its names are verbObject);
  self-contained      a new request after an unrelated one: its own tool
                      (the context must not pull it away);
  turn-2 / turn-3     how many earlier turns the context holds.
The first turns are the datasets' own single-tool requests; the follow-up
wording is ours (templates below). Licence: as the source datasets'
(LICENSE.txt in each directory).
"""
import json
import random
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

SAME_TOOL = [
    "Do the same for {x}.",
    "What about {x}?",
    "And for {x}?",
    "Same again, but for {x} this time.",
    "Now try it with {x} instead.",
    "Can you do that for {x} too?",
    "ok, now {x}",
    "Repeat that for {x}, please.",
]
FILLERS = [
    "Paris", "Tokyo", "Nairobi", "Lima", "next Friday", "March 3rd", "last year",
    "my sister", "Dr. Patel", "the Berlin office", "25 units", "$300", "the second one",
    "tomorrow morning", "the team in Austin", "Q3",
]
NEW_VERB = [
    "Now {v} it.",
    "Actually, please {v} that.",
    "Can you {v} it as well?",
    "OK, {v} the same one.",
    "Great. Next, {v} it.",
    "{V} it now.",
]
# verbs that read as an instruction about "it"
VERBS = {
    "delete", "update", "cancel", "remove", "send", "track", "schedule", "check",
    "analyze", "stop", "start", "validate", "verify", "publish", "submit", "share",
    "restore", "evaluate", "refund", "ship", "deploy", "translate", "create", "add",
    "book", "edit", "approve", "archive", "monitor", "optimize", "record", "test",
    "register", "review", "rate", "print", "upload", "download", "join", "close",
    "open", "pause", "resume", "renew", "confirm", "report", "calculate", "estimate",
}


def split_camel(name):
    return re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", name)


def load(path):
    return [json.loads(l) for l in open(path) if l.strip()]


def single(queries):
    return [q for q in queries if len(q["gold"]) == 1]


def build(name, rng, n_same, n_verb, n_self, n_later):
    d = HERE / name
    tools = load(d / "tools.jsonl")
    qs = single(load(d / "queries.jsonl"))
    rng.shuffle(qs)
    out = []
    pick = iter(qs)

    def add(kind, turn, context, gold, extra=()):
        out.append({
            "id": f"{name}-mt-{len(out)}",
            "query": turn,
            "gold": gold,
            "context": "\n".join(context),
            "tags": ["multiturn", kind, f"turn-{len(context) + 1}", *extra],
        })

    for _ in range(n_same):
        q = next(pick)
        add("followup-same-tool", rng.choice(SAME_TOOL).format(x=rng.choice(FILLERS)), [q["query"]], q["gold"])
    if n_verb:
        by_object = {}
        for t in tools:
            parts = split_camel(t["name"])
            if len(parts) >= 2 and parts[0].islower():
                by_object.setdefault("".join(parts[1:]), {})[parts[0]] = t["id"]
        made = 0
        for q in qs:
            if made >= n_verb:
                break
            parts = split_camel(q["gold"][0])
            if len(parts) < 2:
                continue
            others = {v: i for v, i in by_object.get("".join(parts[1:]), {}).items()
                      if v != parts[0] and v in VERBS}
            if not others:
                continue
            v = rng.choice(sorted(others))
            turn = rng.choice(NEW_VERB).format(v=v, V=v.capitalize())
            add("followup-new-verb", turn, [q["query"]], [others[v]])
            made += 1
    for _ in range(n_self):
        a, b = next(pick), next(pick)
        add("self-contained", b["query"], [a["query"]], b["gold"])
    for _ in range(n_later):
        a, b = next(pick), next(pick)
        first = rng.choice(SAME_TOOL).format(x=rng.choice(FILLERS))
        add("followup-same-tool", rng.choice(SAME_TOOL).format(x=rng.choice(FILLERS)),
            [a["query"], first], a["gold"])
        c = next(pick)
        add("self-contained", c["query"], [a["query"], b["query"]], c["gold"])
    with open(d / "queries_multiturn.jsonl", "w") as f:
        for q in out:
            f.write(json.dumps(q) + "\n")
    return len(out)


def main():
    rng = random.Random(41)
    print("sealtools", build("sealtools", rng, 120, 100, 120, 40))
    print("metatool", build("metatool", rng, 150, 0, 150, 50))


if __name__ == "__main__":
    sys.exit(main())
