"""loom event logs and their .spool sidecars for the demo store (see make_demo.py), following
/work/shared/formats/loom.md."""

import json
import os
import random
from datetime import timedelta

import demo_content as C

from demo_common import (  # noqa: F401
    ROOT,
    berlin,
    events,
    go_line,
    loom_time,
    result_text,
    sha256_hex,
    sidecar_time,
    tool_for,
    utc,
    write,
)

# ---------------------------------------------------------------- loom

LOOM_PREFIX = ("[Context summary - earlier messages were compacted to save space. File contents "
               "mentioned below may be stale, re-read files before editing.]\n\n")


def loom_reopened(sid):
    return ("[Session %s reopened. Time has passed since the messages above and file contents "
            "may have changed; re-read any file before editing it.]" % sid)


def loom_id(dt, taken):
    base = berlin(dt).strftime("%Y%m%d-%H%M%S")
    sid, n = base, 0
    while sid in taken:
        n += 1
        sid = "%s-%d" % (base, n)
    taken.add(sid)
    return sid


def loom_msg(role, content, calls=None, tool_name=None):
    m = {"role": role, "content": content}
    if calls:
        m["tool_calls"] = calls
    if tool_name:
        m["tool_name"] = tool_name
    return m


def loom_compact(window, summary):
    start = max(1, len(window) - 6)
    while start > 1 and window[start]["role"] == "tool":
        start -= 1
    return [window[0], loom_msg("user", LOOM_PREFIX + summary)] + window[start:]


def loom_drop_orphans(msgs):
    i = len(msgs) - 1
    while i >= 0 and msgs[i]["role"] == "tool":
        i -= 1
    if i >= 0 and msgs[i]["role"] == "assistant" and len(msgs[i].get("tool_calls") or []) > len(msgs) - 1 - i:
        return msgs[:i]
    return msgs


def loom_boot(spec):
    """Seconds between loom's start (the id) and the first prompt; varies per session."""
    return spec.get("boot", 5 + int(sha256_hex(spec["key"].encode())[:4], 16) % 50)


def render_loom(spec, built, taken):
    rng = random.Random(spec["key"])
    start = utc(spec["start"])
    sid = loom_id(start - timedelta(seconds=loom_boot(spec)), taken)
    spec["id"] = sid
    model = spec.get("model", "qwen3-coder:30b")
    system = C.loom_system(spec["cwd"], berlin(start).strftime("%Y-%m-%d"))
    recs = []
    boot = start - timedelta(seconds=loom_boot(spec))
    meta = {"kind": "meta", "time": loom_time(boot), "model": model, "cwd": spec["cwd"]}
    if spec.get("fork_of"):
        src = built[spec["fork_of"]]
        meta["forked_from"] = src["id"]
        recs.append(meta)
        recs.append({"kind": "system", "time": loom_time(boot), "message": src["last_system"]})
        window = loom_replay(src["recs"])
        for m in window[1:] + [loom_msg("user", loom_reopened(src["id"]))]:
            recs.append({"kind": "message", "time": loom_time(boot), "message": m})
        system = src["last_system"]["content"]
    else:
        recs.append(meta)
        recs.append({"kind": "system", "time": loom_time(boot), "message": {"role": "system", "content": system}})
    for ev in events(spec, rng):
        t = loom_time(ev["t"])
        if ev["k"] == "resume":
            recs.append({"kind": "system", "time": t, "message": {"role": "system", "content": system}})
        elif ev["k"] == "user":
            recs.append({"kind": "message", "time": t, "message": loom_msg("user", ev["text"])})
        elif ev["k"] == "asst":
            if ev["error"]:
                continue
            calls = []
            for c in ev["calls"]:
                name, args = tool_for("loom", c)
                calls.append({"function": {"name": name, "arguments": dict(sorted(args.items()))}})
            recs.append({"kind": "message", "time": t, "message": loom_msg("assistant", ev["text"] or "", calls)})
        elif ev["k"] == "result":
            name, _ = tool_for("loom", ev["call"])
            out = result_text("loom", ev["call"])
            if ev["call"][3] and not out.startswith("error"):
                out = "error: " + out
            recs.append({"kind": "message", "time": t, "message": loom_msg("tool", out, tool_name=name)})
        elif ev["k"] == "compact":
            recs.append({"kind": "compact", "time": t, "summary": ev["summary"]})
    lines = [go_line(r) + "\n" for r in recs]
    if spec.get("broken"):
        # Crash mid-write: a stray merge-conflict marker and a truncated final record.
        lines.insert(len(lines) - 1, C.LOOM_GARBAGE_LINE + "\n")
        lines[-1] = lines[-1][: len(lines[-1]) // 2]
    if spec.get("empty_file"):
        lines = []
    data = "".join(lines)
    path = os.path.join(ROOT, "loom", "sessions", sid + ".jsonl")
    write(path, data)
    last_system = [r["message"] for r in recs if r["kind"] == "system"][-1]
    built[spec["key"]] = {"id": sid, "recs": recs, "last_system": last_system}
    loom_sidecar(spec, sid, recs, lines)


def loom_replay(recs):
    window = [{"role": "system", "content": "(regenerated)"}]
    for r in recs:
        if r["kind"] == "message" and r.get("message") is not None:
            window.append(r["message"])
        elif r["kind"] == "compact":
            window = loom_compact(window, r.get("summary", ""))
    return loom_drop_orphans(window)


def loom_sidecar(spec, sid, recs, lines):
    sc = spec.get("sidecar")
    if not sc:
        return
    obj = {"version": 1, "pinned_at": None, "archived_at": None, "title": None}
    if sc.get("pinned"):
        obj["pinned_at"] = sidecar_time(utc(sc["pinned"]))
    if sc.get("archived"):
        obj["archived_at"] = sidecar_time(utc(sc["archived"]))
    if sc.get("title"):
        obj["title"] = sc["title"]
    if "read_at" in sc:
        # Read marker: the whole log, or the start of the n-th user record (negative = from
        # the end), which is always a record boundary.
        n = len(lines)
        if "read_upto_user" in sc:
            users = [i for i, r in enumerate(recs) if r["kind"] == "message" and r["message"]["role"] == "user"]
            n = users[sc["read_upto_user"]]
        obj["read_bytes"] = len("".join(lines[:n]).encode())
        obj["read_messages"] = sum(1 for r in recs[:n] if r["kind"] == "message")
        obj["read_at"] = sidecar_time(utc(sc["read_at"]))
    write(os.path.join(ROOT, "loom", "sessions", ".spool", sid + ".json"),
          json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
