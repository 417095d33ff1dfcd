#!/usr/bin/env python3
"""Regenerate spool's bundled demo store, assets/demo/, from scratch.

    python3 scripts/make_demo.py            # rebuild assets/demo and verify it
    python3 scripts/make_demo.py --check    # only verify what is on disk

The conversations live in scripts/demo_content.py in a store-neutral form (rounds of a user
prompt, tool calls with results, assistant replies). This script renders each one in the byte
format of its store, following /work/shared/formats/{loop,loom,harness}.md:

  assets/demo/loop/sessions/<collection>/...   Loop v3 dirs, legacy v2 files, archive.json
  assets/demo/loom/sessions/<id>.jsonl         loom event logs + .spool/<id>.json sidecars
  assets/demo/harness/sessions/<id>.json       harness records + <id>.lock + .spool sidecars

Everything is deterministic: ids come from hashes of the session keys, "randomness" from
random.Random seeded with the key, times from the content file. Only the standard library is
used. After writing, verify() re-reads every Loop session and checks its generation hash,
committed range and round index, parses every JSON file, and checks the loom escaping.
"""

import base64
import copy
import hashlib
import json
import os
import random
import shutil
import sys
import uuid
from datetime import datetime, timedelta, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import demo_content as C  # noqa: E402
import demo_agents  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "assets", "demo")
EMPTY_SHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

# ---------------------------------------------------------------- ids, times, serialisation


def sha256_hex(b):
    return hashlib.sha256(b).hexdigest()


def loop_uuid(key):
    """A lowercase v4-shaped UUID derived from the session key (crypto.randomUUID look)."""
    return str(uuid.UUID(bytes=hashlib.sha256(b"loop:" + key.encode()).digest()[:16], version=4))


def harness_id(key):
    """secrets.token_urlsafe(12) look: 16 characters of URL-safe base64."""
    return base64.urlsafe_b64encode(hashlib.sha256(b"harness:" + key.encode()).digest()[:12]).decode()


def collection(cwd):
    return sha256_hex(cwd.encode())[:24]


def utc(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)


def ms(dt):
    return int(dt.timestamp() * 1000)


def iso_ms(dt):
    """JavaScript toISOString(): YYYY-MM-DDTHH:mm:ss.sssZ."""
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (dt.microsecond // 1000)


def berlin(dt):
    """The demo user's local time (Europe/Berlin: CEST until 2026-10-25 01:00 UTC, then CET)."""
    off = 2 if dt < datetime(2026, 10, 25, 1, 0, tzinfo=timezone.utc) else 1
    return dt.astimezone(timezone(timedelta(hours=off)))


def loom_time(dt):
    """Go time.RFC3339 in local time, whole seconds."""
    return berlin(dt).replace(microsecond=0).isoformat()


def harness_time(dt):
    """datetime.now(timezone.utc).isoformat(timespec="seconds")."""
    return dt.astimezone(timezone.utc).replace(microsecond=0).isoformat()


def sidecar_time(dt):
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def js_line(obj):
    """JSON.stringify(obj): compact, raw UTF-8."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def js_pretty(obj):
    """JSON.stringify(obj, null, 2) + "\\n"."""
    return json.dumps(obj, ensure_ascii=False, indent=2) + "\n"


def go_line(obj):
    """Go encoding/json: compact, with <, >, & and U+2028/U+2029 escaped."""
    s = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    for ch, esc in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"),
                    ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        s = s.replace(ch, esc)
    return s


def py_pretty(obj):
    """json.dump(record, f, ensure_ascii=False, indent=2) followed by "\\n"."""
    return json.dumps(obj, ensure_ascii=False, indent=2) + "\n"


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


# ---------------------------------------------------------------- neutral conversation walk


class Clock:
    """Message times: small steps inside a round, longer gaps between rounds."""

    def __init__(self, start, rng):
        self.t = start
        self.rng = rng

    def step(self, lo=2, hi=40):
        self.t += timedelta(seconds=self.rng.randint(lo, hi), milliseconds=self.rng.randint(0, 999))
        return self.t

    def gap(self, lo=40, hi=900):
        return self.step(lo, hi)


def events(spec, rng):
    """Flatten a spec's rounds into timed events shared by all three renderers.

    Yields dicts: {"k": "user", text, t} | {"k": "asst", think, text, calls, t, error}
    | {"k": "result", call, t} | {"k": "compact", summary, keep, t}.
    """
    clock = Clock(utc(spec["start"]), rng)
    out = []
    first = True
    for rnd in spec["rounds"]:
        if rnd[0] == "compact":
            out.append({"k": "compact", "summary": rnd[1], "keep": rnd[2], "t": clock.step(20, 90)})
            continue
        if rnd[0] == "gap":
            # The user came back later (loom logs a fresh system record on /resume).
            clock.t += timedelta(hours=rnd[1])
            out.append({"k": "resume", "t": clock.t})
            continue
        text, steps = rnd[0], rnd[1:]
        out.append({"k": "user", "text": text, "t": clock.t if first else clock.gap()})
        first = False
        for st in steps:
            kind = st[0]
            if kind == "say":
                out.append({"k": "asst", "think": st[2] if len(st) > 2 else None, "text": st[1],
                            "calls": [], "t": clock.step(3, 30), "error": None})
            elif kind == "error":
                out.append({"k": "asst", "think": None, "text": None, "calls": [],
                            "t": clock.step(1, 5), "error": st[1]})
            elif kind == "tools":
                _, think, text, calls = st
                out.append({"k": "asst", "think": think, "text": text, "calls": calls,
                            "t": clock.step(2, 15), "error": None})
                for c in calls:
                    out.append({"k": "result", "call": c, "t": clock.step(1, 25 if c[0] == "bash" else 3)})
            else:
                raise ValueError(kind)
    return out


# Tool vocabulary: neutral name -> per-store (name, argument builder, default result).
def tool_for(store, call):
    name, args = call[0], call[1]
    if name == "read":
        return {"loop": "read", "loom": "read_file", "harness": "read_file"}[store], {"path": args["path"]}
    if name == "bash":
        return {"loop": "bash", "loom": "bash", "harness": "run_bash"}[store], {"command": args["command"]}
    if name == "grep":
        if store == "loom":
            return "bash", {"command": "grep -rn '%s' %s" % (args["pattern"], args["path"])}
        return "grep", {"pattern": args["pattern"], "path": args["path"]}
    if name == "edit":
        if store == "loop":
            return "edit", {"path": args["path"], "oldText": args["old"], "newText": args["new"]}
        return "edit_file", {"path": args["path"], "old_string": args["old"], "new_string": args["new"]}
    if name == "write":
        return {"loop": "write", "loom": "write_file", "harness": "write_file"}[store], \
            {"path": args["path"], "content": args["content"]}
    return name, dict(args)


def result_text(store, call):
    name, args, out = call[0], call[1], call[2]
    if out is not None:
        return out
    if name == "edit":
        return {"loop": "Successfully replaced text in %s.",
                "loom": "edited %s",
                "harness": "Edited %s (1 replacement)"}[store] % args["path"]
    if name == "write":
        n = len(args["content"].encode())
        return {"loop": "Successfully wrote %d bytes to %s" % (n, args["path"]),
                "loom": "wrote %d bytes to %s" % (n, args["path"]),
                "harness": "Wrote %d bytes to %s" % (n, args["path"])}[store]
    return ""


# ---------------------------------------------------------------- Loop

MODELS = {
    "gpt": ({"provider": "openai", "id": "gpt-5.5", "effort": "medium"}, "openai-responses", (1.25, 10.0)),
    "claude": ({"provider": "anthropic", "id": "claude-sonnet-4-5"}, "anthropic-messages", (3.0, 15.0)),
    "qwen": ({"provider": "local", "id": "qwen3-coder"}, "openai-completions", (0.0, 0.0)),
}


def loop_call_id(rng, provider):
    alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    if provider == "anthropic":
        return "toolu_01" + "".join(rng.choice(alnum) for _ in range(22))
    if provider == "openai":
        return "call_" + "".join(rng.choice(alnum) for _ in range(24))
    return "call_%08x" % rng.getrandbits(32)


def usage(ctx_bytes, out_bytes, price):
    inp, out = 1800 + ctx_bytes // 4, 12 + out_bytes // 4
    ci, co = round(inp * price[0] / 1e6, 6), round(out * price[1] / 1e6, 6)
    return {"input": inp, "output": out, "cacheRead": 0, "cacheWrite": 0, "totalTokens": inp + out,
            "cost": {"input": ci, "output": co, "cacheRead": 0, "cacheWrite": 0, "total": round(ci + co, 6)}}


def loop_history(spec, rng):
    """pi-ai messages plus the bookkeeping needed for the header (compactions, timings)."""
    model, api, price = MODELS[spec.get("model", "gpt")]
    msgs, compactions, ctx = [], [], 0
    ids = {}
    user_idx = []
    for ev in events(spec, rng):
        if ev["k"] == "user":
            content = ev["text"]
            if spec.get("image_round") == len(user_idx):
                content = [{"type": "text", "text": ev["text"]},
                           {"type": "image", "data": C.TINY_PNG, "mimeType": "image/png"}]
            user_idx.append(len(msgs))
            m = {"role": "user", "content": content, "timestamp": ms(ev["t"])}
        elif ev["k"] == "asst":
            blocks = []
            if ev["think"]:
                blocks.append({"type": "thinking", "thinking": ev["think"]})
            if ev["text"]:
                blocks.append({"type": "text", "text": ev["text"]})
            for c in ev["calls"]:
                name, args = tool_for("loop", c)
                cid = loop_call_id(rng, model["provider"])
                ids[id(c)] = cid
                blocks.append({"type": "toolCall", "id": cid, "name": name, "arguments": args})
            m = {"role": "assistant", "content": blocks, "api": api, "provider": model["provider"],
                 "model": model["id"], "usage": usage(ctx, len(js_line(blocks)), price),
                 "stopReason": "toolUse" if ev["calls"] else "stop", "timestamp": ms(ev["t"])}
            if ev["error"]:
                m["usage"] = usage(0, 0, price)
                m["stopReason"] = "error"
                m["errorMessage"] = ev["error"]
                m["timestamp"] = ms(ev["t"])
        elif ev["k"] == "result":
            c = ev["call"]
            name, _ = tool_for("loop", c)
            m = {"role": "toolResult", "toolCallId": ids[id(c)], "toolName": name,
                 "content": [{"type": "text", "text": result_text("loop", c)}],
                 "isError": bool(c[3]), "timestamp": ms(ev["t"])}
            if len(c) > 4 and c[4]:
                m["details"] = c[4]
        elif ev["k"] == "compact":
            # Keep the last `keep` rounds visible to the model.
            first_kept = user_idx[-ev["keep"]]
            compactions.append({
                "id": loop_uuid("%s/compaction/%d" % (spec["key"], len(compactions))),
                "firstKeptMessageIndex": first_kept, "historyMessageCount": len(msgs),
                "summary": ev["summary"], "timestamp": ms(ev["t"]),
                "provider": model["provider"], "model": model["id"],
                "usage": usage(ctx, len(ev["summary"]), price)})
            continue
        else:
            continue
        ctx += len(js_line(m))
        msgs.append(m)
    return msgs, compactions, model


def prompt_timings(key, msgs):
    users = [i for i, m in enumerate(msgs) if m["role"] == "user"]
    out = []
    for n, u in enumerate(users):
        end = users[n + 1] if n + 1 < len(users) else len(msgs)
        out.append({"id": loop_uuid("%s/timing/%d" % (key, n)), "userMessageIndex": u,
                    "messageStartIndex": u, "messageEndIndex": end,
                    "startedAt": msgs[u]["timestamp"], "finishedAt": msgs[end - 1]["timestamp"]})
    return out


def loop_header(spec, msgs, compactions, model, created, updated):
    h = {"format": "loop-session", "version": 2, "id": spec["id"], "cwd": spec["cwd"],
         "createdAt": iso_ms(created), "updatedAt": iso_ms(updated)}
    if spec.get("unread") is not None:
        h["unread"] = spec["unread"]
    if spec.get("pinned"):
        h["pinnedAt"] = iso_ms(utc(spec["pinned"]) + timedelta(milliseconds=417))
    h["model"] = model
    t = spec.get("title")
    if t:
        first_user = next((i for i, m in enumerate(msgs) if m["role"] == "user"), 0)
        if t[0] == "model":
            h["title"] = {"text": t[1], "source": "model", "messageIndices": [first_user],
                          "model": {"provider": model["provider"], "id": model["id"]}}
        else:
            h["title"] = {"text": t[1], "source": "user", "messageIndices": []}
    h["permissionPreset"] = spec.get("permission", "workspace-write")
    if msgs and spec.get("layout") != "v2":
        h["promptTimings"] = prompt_timings(spec["key"], msgs)
    elif msgs:
        # Loop v2 wrote the obsolete runTimings; v3 readers ignore it.
        h["runTimings"] = [{"userMessageIndex": t["userMessageIndex"], "startedAt": t["startedAt"],
                            "finishedAt": t["finishedAt"]} for t in prompt_timings(spec["key"], msgs)]
    if spec.get("runtime_context") and msgs:
        h["runtimeContexts"] = [{"userTurn": 0, "content": spec["runtime_context"],
                                 "timestamp": msgs[0]["timestamp"] - 40, "placement": "user"}]
    if spec.get("system_prompt") and msgs:
        cps = [{"messageCount": 1, "timestamp": msgs[0]["timestamp"] - 55, "sections": C.loop_system_sections(spec["cwd"])}]
        for at_round, sections in spec.get("system_prompt_changes", []):
            users = [i for i, m in enumerate(msgs) if m["role"] == "user"]
            cps.append({"messageCount": users[at_round] + 1, "timestamp": msgs[users[at_round]]["timestamp"] - 30,
                        "sections": sections})
        h["systemPromptCheckpoints"] = cps
    if compactions:
        h["compactions"] = compactions
    return h


def build_index(generation, lines):
    rounds, off = [], 0
    for i, line in enumerate(lines):
        if json.loads(line)["role"] == "user":
            rounds.append({"messageIndex": i, "byteOffset": off})
        off += len(line.encode())
    return {"generation": generation, "rounds": rounds}


def render_loop(spec, built):
    rng = random.Random(spec["key"])
    spec["id"] = loop_uuid(spec["key"])
    msgs, compactions, model = loop_history(spec, rng)
    created = utc(spec["start"]) - timedelta(seconds=3)
    if spec.get("fork_of"):
        src = built[spec["fork_of"]]
        k = [i for i, m in enumerate(src["msgs"]) if m["role"] == "user"][spec["fork_round"]]
        prefix = src["msgs"][:k]
        created = utc(spec["start"]) - timedelta(minutes=2)
        # Same message objects, so the committed prefix is byte-identical to the source's.
        msgs = prefix + msgs
        compactions = [c for c in src["compactions"] if c["historyMessageCount"] <= k] + compactions
    updated = datetime.fromtimestamp(msgs[-1]["timestamp"] / 1000, timezone.utc) if msgs else created
    header = loop_header(spec, msgs, compactions, model, created, updated)
    if spec.get("fork_of"):
        header["forkedFrom"] = {"id": built[spec["fork_of"]]["id"], "messageCount": k}
    coll = os.path.join(ROOT, "loop", "sessions", collection(spec["cwd"]))
    lines = [js_line(m) + "\n" for m in msgs]
    built[spec["key"]] = {"id": spec["id"], "msgs": msgs, "compactions": compactions}

    if spec.get("layout") == "v2":
        write(os.path.join(coll, spec["id"] + ".jsonl"), js_line(header) + "\n" + "".join(lines))
        return
    old = ""
    if spec.get("layout") == "replaced":
        # An earlier generation (the first attempt) sits before `start`, unreachable.
        old = "".join(js_line(m) + "\n" for m in C.loop_replaced_old(msgs, model))
    body = "".join(lines).encode()
    generation = sha256_hex(body)
    meta = {"format": "loop-session", "version": 3, "header": header, "generation": generation,
            "start": len(old.encode()), "bytes": len(body), "messageCount": len(msgs)}
    d = os.path.join(coll, spec["id"])
    data = old.encode() + body
    if spec.get("layout") == "replaced":
        data += C.LOOP_UNCOMMITTED_TAIL.encode()
    if spec.get("layout") == "broken":
        data = data[: len(data) * 3 // 5]  # the disk lost the end of the committed range
    write(os.path.join(d, "meta.json"), js_pretty(meta))
    write(os.path.join(d, "messages.jsonl"), data)
    write(os.path.join(d, "index.json"), js_pretty(build_index(generation, [l for l in lines])))


def write_loop_archives(specs):
    by_coll = {}
    for s in specs:
        by_coll.setdefault(collection(s["cwd"]), [])
        if s.get("archived"):
            by_coll[collection(s["cwd"])].append(s["id"])
    for coll, ids in sorted(by_coll.items()):
        extra = C.LOOP_STALE_ARCHIVE_IDS.get(coll_cwd(specs, coll), [])
        if ids or extra:
            write(os.path.join(ROOT, "loop", "sessions", coll, "archive.json"), js_line(ids + extra) + "\n")


def coll_cwd(specs, coll):
    return next(s["cwd"] for s in specs if collection(s["cwd"]) == coll)


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


# ---------------------------------------------------------------- agent-harness


def hcall_id(rng):
    return "call_" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(6))


def render_harness(spec, built):
    rng = random.Random(spec["key"])
    hid = harness_id(spec["key"])
    spec["id"] = hid
    sysmsg = {"role": "system", "content": C.harness_system(spec["cwd"])}
    sessions = os.path.join(ROOT, "harness", "sessions")
    created = utc(spec["start"]) - timedelta(seconds=6)
    if spec.get("fork_of"):
        src = copy.deepcopy(built[spec["fork_of"]]["record"])
        window, transcript = src["messages"], src["transcript"]
        compactions = src["compactions"]
        created = utc(spec["start"]) - timedelta(minutes=3)
    else:
        window, transcript, compactions = [sysmsg], [copy.deepcopy(sysmsg)], []
    n_calls = n_llm = 0
    ids = {}
    last_t = created
    for ev in events(spec, rng):
        last_t = ev["t"]
        if ev["k"] == "user":
            text = ev["text"] if spec.get("unwrapped") else "<user_input>\n%s\n</user_input>" % ev["text"]
            ms_ = [{"role": "user", "content": text}]
        elif ev["k"] == "asst":
            if ev["error"]:
                continue
            n_llm += 1
            m = {}
            if ev["text"]:
                m["content"] = ev["text"]
            m["role"] = "assistant"
            if ev["calls"]:
                m["tool_calls"] = []
                for c in ev["calls"]:
                    name, args = tool_for("harness", c)
                    cid = hcall_id(rng)
                    ids[id(c)] = cid
                    n_calls += 1
                    m["tool_calls"].append({"id": cid, "function": {
                        "arguments": json.dumps(args, ensure_ascii=False), "name": name}, "type": "function"})
            ms_ = [m]
        elif ev["k"] == "result":
            c = ev["call"]
            if len(c) > 4 and c[4] == "interrupted":
                continue  # the process died before this result was recorded
            name, _ = tool_for("harness", c)
            out = result_text("harness", c)
            if c[3]:
                out = "Error: " + out
            ms_ = [{"role": "tool", "tool_call_id": ids[id(c)],
                    "content": '<tool_result name="%s">\n%s\n</tool_result>' % (name, out)}]
        elif ev["k"] == "compact":
            users = [i for i, m in enumerate(window) if m["role"] == "user"]
            cut = users[-ev["keep"]]
            kept = window[cut:]
            compactions.append({"created_at": harness_time(ev["t"]), "summary": ev["summary"],
                                "replaced_messages": len(window) - 1 - len(kept),
                                "transcript_length": len(transcript)})
            window = [window[0], {"role": "user", "content": "Summary of the earlier conversation:\n" + ev["summary"]}] + kept
            continue
        else:
            continue
        window = window + copy.deepcopy(ms_)
        transcript = transcript + copy.deepcopy(ms_)
    if spec.get("memory_store_era"):
        rec = {"id": hid, "created_at": harness_time(created), "updated_at": harness_time(last_t + timedelta(seconds=2)),
               "summary": "", "messages": window}
    else:
        st = spec.get("state", {})
        base_in = sum(len(json.dumps(m)) for m in transcript) // 3
        rec = {"id": hid, "created_at": harness_time(created),
               "updated_at": harness_time(last_t + timedelta(seconds=2)),
               "summary": spec.get("summary") or fallback_summary(window),
               "messages": window, "transcript": transcript,
               "title": spec.get("title", ""), "archived": bool(spec.get("archived")),
               "state": {"scratchpad": st.get("scratchpad", ""), "todos": st.get("todos", []),
                         "tool_calls": n_calls + (src["state"].get("tool_calls", 0) if spec.get("fork_of") else 0),
                         "total_tokens_in": base_in * n_llm, "total_tokens_out": (90 * n_llm + 40) if n_llm else 0,
                         "total_cost_usd": 0.0, "calls": n_llm},
               "compactions": compactions, "project_root": spec["cwd"],
               "status": spec.get("status", "saved")}
        if spec.get("fork_of"):
            rec["branched_from"] = built[spec["fork_of"]]["id"]
            rec["title"] = built[spec["fork_of"]]["record"]["title"] + " (branch)"
    built[spec["key"]] = {"id": hid, "record": rec}
    data = py_pretty(rec)
    if spec.get("broken"):
        data = C.harness_break(data)
    write(os.path.join(sessions, hid + ".json"), data)
    write(os.path.join(sessions, hid + ".lock"), b"")
    sc = spec.get("sidecar")
    if sc:
        obj = {"version": 1, "pinned_at": sidecar_time(utc(sc["pinned"])) if sc.get("pinned") else None}
        if "read_at" in sc:
            # Read up to the whole transcript, or up to the n-th user entry (negative = from the end).
            n = len(transcript)
            if "read_upto_user" in sc:
                n = [i for i, m in enumerate(transcript) if m["role"] == "user"][sc["read_upto_user"]]
            obj["read_transcript_len"] = n
            obj["read_at"] = sidecar_time(utc(sc["read_at"]))
        write(os.path.join(sessions, ".spool", hid + ".json"),
              json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")


def fallback_summary(window):
    """The harness's ensure_summary() excerpt."""
    parts = ["%s: %s" % (m["role"], m["content"]) for m in window
             if m["role"] in ("user", "assistant") and m.get("content")]
    s = "\n".join(parts[-6:])[:2000]
    return s or "Session ended without messages."


# ---------------------------------------------------------------- README


def squash(s):
    return " ".join(s.split())


def shown_title(spec, built):
    """The list title each store's contract derives (approximately: enough for the README)."""
    users = [r[0] for r in spec["rounds"] if r[0] not in ("compact", "gap")]
    if spec["store"] == "loop":
        t = spec.get("title")
        if t:
            return t[1]
        if spec.get("fork_of"):
            users = [r[0] for r in next(s for s in C.SESSIONS if s["key"] == spec["fork_of"])["rounds"]] + users
        return " ".join(squash(users[0]).split(" ")[:8]) if users else "New session"
    if spec["store"] == "loom":
        if spec.get("sidecar", {}).get("title"):
            return spec["sidecar"]["title"]
        if spec.get("fork_of"):
            users = [r[0] for r in next(s for s in C.SESSIONS if s["key"] == spec["fork_of"])["rounds"]] + users
        t = squash(users[0]) if users else "(empty session)"
        return t if len(t) <= 80 else t[:79] + "…"
    if spec["store"] in ("claude", "pi", "codex"):
        if spec.get("title") or spec.get("name"):
            return spec.get("title") or spec.get("name")
        if spec.get("fork_of"):
            users = [r[0] for r in next(s for s in C.SESSIONS if s["key"] == spec["fork_of"])["rounds"]] + users
            if spec["store"] == "codex":
                # Codex's preview is the copied first prompt; spool marks the fork.
                return squash(users[0])[:100] + " (fork)"
        return squash(users[0])[:100]
    rec = built[spec["key"]]["record"]
    if rec.get("title", "").strip():
        return rec["title"].strip()
    if spec.get("fork_of"):
        users = [r[0] for r in next(s for s in C.SESSIONS if s["key"] == spec["fork_of"])["rounds"]] + users
    if users:
        return squash(users[0])[:80]
    return rec.get("summary", "").split("\n")[0] or rec["id"]


def count_calls(spec):
    return sum(len(st[3]) for r in spec["rounds"] if r[0] not in ("compact", "gap")
               for st in r[1:] if st[0] == "tools")


def demo_readme(sessions, built):
    rows = ["| store | id | title (as listed) | project | rounds | tool calls | features |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for s in sessions:
        n = sum(1 for r in s["rounds"] if r[0] not in ("compact", "gap"))
        rows.append("| %s | `%s` | %s | %s | %d | %d | %s |" % (
            s["store"], s["id"], shown_title(s, built).replace("|", "\\|"), s["cwd"].rsplit("/", 1)[1], n,
            count_calls(s), s.get("features", "")))
    return ("# spool demo store\n\nGenerated by `python3 scripts/make_demo.py` (verify with `--check`); do not "
            "edit by hand. `spool --demo` browses a private copy of it.\n\nThe projects under "
            "/home/demo/projects do not exist, so rows carry a \"cwd missing\" badge. Sessions marked "
            "BROKEN are damaged on purpose. Rounds and tool calls count the session's own rounds (a fork's "
            "copied prefix is not counted).\n\n" + "\n".join(rows) + "\n")


# ---------------------------------------------------------------- verification


def verify():
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
    n.update(demo_agents.verify(sys.modules[__name__], problems, EXPECTED_BROKEN))
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


# ---------------------------------------------------------------- main


def main():
    if "--check" not in sys.argv:
        if os.path.exists(ROOT):
            shutil.rmtree(ROOT)
        built, taken = {}, set()
        loop_specs = [s for s in C.SESSIONS if s["store"] == "loop"]
        for s in C.SESSIONS:
            if s["store"] == "loop":
                render_loop(s, built)
            elif s["store"] == "loom":
                render_loom(s, built, taken)
            elif s["store"] == "claude":
                demo_agents.render_claude(sys.modules[__name__], s, built, C.SESSIONS)
            elif s["store"] == "pi":
                demo_agents.render_pi(sys.modules[__name__], s, built, C.SESSIONS)
            elif s["store"] == "codex":
                demo_agents.render_codex(sys.modules[__name__], s, built, C.SESSIONS)
            else:
                render_harness(s, built)
        write_loop_archives(loop_specs)
        write(os.path.join(ROOT, "README.md"), demo_readme(C.SESSIONS, built))
    else:
        # Ids are derived from keys and times, so they can be recomputed without writing.
        taken = set()
        for s in C.SESSIONS:
            s["id"] = {"loop": lambda: loop_uuid(s["key"]), "harness": lambda: harness_id(s["key"]),
                       "claude": lambda: demo_agents.agent_uuid("claude", s["key"]),
                       "pi": lambda: demo_agents.agent_uuid("pi", s["key"]),
                       "codex": lambda: demo_agents.agent_uuid("codex", s["key"]),
                       "loom": lambda: loom_id(utc(s["start"]) - timedelta(seconds=loom_boot(s)), taken)}[s["store"]]()
    EXPECTED_BROKEN.update(s["id"] for s in C.SESSIONS if s.get("broken") or s.get("layout") == "broken")
    problems = verify()
    for p in problems:
        print("PROBLEM:", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
