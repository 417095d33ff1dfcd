"""Re-reads the written demo store and checks each contract's invariants (make_demo.py --check)."""

import json
import os

import demo_agents
from demo_common import (  # noqa: F401
    EMPTY_SHA,
    ROOT,
    js_pretty,
    py_pretty,
    sha256_hex,
)

# ---------------------------------------------------------------- verification


def verify(M):
    """M is make_demo, handed to demo_agents.verify as its renderers are."""
    """Re-read everything written and check the contract invariants. Returns the problem list."""
    problems = []
    loop_root = os.path.join(ROOT, "loop", "sessions")
    n = {"loop": 0, "loom": 0, "harness": 0}
    for coll in sorted(os.listdir(loop_root)):
        cdir = os.path.join(loop_root, coll)
        for name in sorted(os.listdir(cdir)):
            p = os.path.join(cdir, name)
            if name == "archive.json":
                arr = json.load(open(p))
                if not (isinstance(arr, list) and all(isinstance(x, str) and len(x) == 36 for x in arr)):
                    problems.append("bad archive " + p)
            elif name.endswith(".jsonl"):
                n["loop"] += 1
                raw = open(p, "rb").read()
                if not raw.endswith(b"\n"):
                    problems.append("v2 file without final newline " + p)
                for line in raw.split(b"\n")[:-1]:
                    json.loads(line)
            elif os.path.isdir(p):
                n["loop"] += 1
                problems += verify_loop_dir(p, name)
    for name in sorted(os.listdir(os.path.join(ROOT, "loom", "sessions"))):
        p = os.path.join(ROOT, "loom", "sessions", name)
        if name.endswith(".jsonl"):
            n["loom"] += 1
            problems += verify_loom(p)
    spool = os.path.join(ROOT, "loom", "sessions", ".spool")
    for name in os.listdir(spool):
        json.load(open(os.path.join(spool, name)))
    hdir = os.path.join(ROOT, "harness", "sessions")
    for name in sorted(os.listdir(hdir)):
        p = os.path.join(hdir, name)
        if name.endswith(".json"):
            n["harness"] += 1
            raw = open(p, encoding="utf-8").read()
            try:
                rec = json.loads(raw)
            except ValueError:
                if name[:-5] not in EXPECTED_BROKEN:
                    problems.append("unparsable harness record " + p)
                continue
            if py_pretty(rec) != raw:
                problems.append("harness record not in json.dump(indent=2) form " + p)
            if rec["id"] != name[:-5] or not os.path.exists(p[:-5] + ".lock"):
                problems.append("harness id/lock mismatch " + p)
    for name in os.listdir(os.path.join(hdir, ".spool")):
        json.load(open(os.path.join(hdir, ".spool", name)))
    n.update(demo_agents.verify(M, problems, EXPECTED_BROKEN))
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(ROOT) for f in fs)
    if size > 1_100_000:
        problems.append("demo is %d bytes, over budget" % size)
    print("verified: %d loop, %d loom, %d harness, %d claude, %d pi, %d codex rollouts, %d bytes"
          % (n["loop"], n["loom"], n["harness"], n["claude"], n["pi"], n["codex"], size))
    return problems


EXPECTED_BROKEN = set()


def verify_loop_dir(d, name):
    probs = []
    meta = json.load(open(os.path.join(d, "meta.json"), encoding="utf-8"))
    if open(os.path.join(d, "meta.json"), encoding="utf-8").read() != js_pretty(meta):
        probs.append("meta not 2-space JSON + newline: " + d)
    if meta["header"]["id"] != name:
        probs.append("id mismatch " + d)
    data = open(os.path.join(d, "messages.jsonl"), "rb").read()
    s, b = meta["start"], meta["bytes"]
    if len(data) < s + b:
        if name not in EXPECTED_BROKEN:
            probs.append("committed bytes missing in " + d)
        return probs
    rng = data[s:s + b]
    if sha256_hex(rng) != meta["generation"]:
        probs.append("generation mismatch " + d)
    if b == 0:
        if meta["generation"] != EMPTY_SHA or meta["messageCount"] != 0:
            probs.append("empty session meta wrong " + d)
    elif not rng.endswith(b"\n") or rng.count(b"\n") != meta["messageCount"]:
        probs.append("range/messageCount mismatch " + d)
    lines = rng.split(b"\n")[:-1] if b else []
    msgs = [json.loads(line) for line in lines]
    idx = json.load(open(os.path.join(d, "index.json"), encoding="utf-8"))
    if idx["generation"] != meta["generation"]:
        probs.append("index generation stale " + d)
    users = [i for i, m in enumerate(msgs) if m["role"] == "user"]
    if [r["messageIndex"] for r in idx["rounds"]] != users:
        probs.append("index rounds != user messages " + d)
    for r in idx["rounds"]:
        o = r["byteOffset"]
        if not (0 <= o < b) or (o > 0 and rng[o - 1:o] != b"\n"):
            probs.append("index offset not at a line start " + d)
        elif json.loads(rng[o:rng.index(b"\n", o)])["role"] != "user":
            probs.append("index offset does not point at the user line " + d)
    probs += verify_loop_pairing(msgs, d)
    for c in meta["header"].get("compactions", []):
        if msgs[c["firstKeptMessageIndex"]]["role"] != "user" or c["historyMessageCount"] > len(msgs):
            probs.append("bad compaction " + d)
    return probs


def verify_loop_pairing(msgs, d):
    probs = []
    for i, m in enumerate(msgs):
        if m["role"] != "assistant" or m["stopReason"] in ("error", "aborted"):
            continue
        want = sorted(b["id"] for b in m["content"] if b["type"] == "toolCall")
        got, j = [], i + 1
        while j < len(msgs) and msgs[j]["role"] == "toolResult":
            got.append(msgs[j]["toolCallId"])
            j += 1
        if sorted(got) != want:
            probs.append("unpaired tool calls at %d in %s" % (i, d))
    return probs


def verify_loom(p):
    probs = []
    raw = open(p, "rb").read().decode("utf-8")
    bad = 0
    for line in raw.split("\n"):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if list(r)[:2] != ["kind", "time"]:
            probs.append("loom key order " + p)
        if any(ch in line for ch in "<>&\u2028\u2029"):
            probs.append("loom line not Go-escaped " + p)
    sid = os.path.basename(p)[:-6]
    if bad and sid not in EXPECTED_BROKEN:
        probs.append("%d unreadable lines in %s" % (bad, p))
    return probs
