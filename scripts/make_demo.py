#!/usr/bin/env python3
"""Regenerate spool's bundled demo store, assets/demo/, from scratch.

    python3 scripts/make_demo.py            # rebuild assets/demo and verify it
    python3 scripts/make_demo.py --check    # only verify what is on disk

The conversations live in scripts/demo_content*.py in a store-neutral form (rounds of a user
prompt, tool calls with results, assistant replies). This script renders each one in the byte
format of its store, following /work/shared/formats/{loop,loom,harness}.md:

  assets/demo/loop/sessions/<collection>/...   Loop v3 dirs, legacy v2 files, archive.json
  assets/demo/loom/sessions/<id>.jsonl         loom event logs + .spool/<id>.json sidecars
  assets/demo/harness/sessions/<id>.json       harness records + <id>.lock + .spool sidecars

Everything is deterministic: ids come from hashes of the session keys, "randomness" from
random.Random seeded with the key, times from the content file. Only the standard library is
used. After writing, demo_verify.verify() re-reads every Loop session and checks its generation hash,
committed range and round index, parses every JSON file, and checks the loom escaping.
"""

import copy
import json
import os
import random
import shutil
import sys
from datetime import datetime, timedelta, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import demo_content as C  # noqa: E402
import demo_agents  # noqa: E402
import demo_verify  # noqa: E402
# demo_agents reaches these through this module (its M), so they are imported by name.
from demo_common import (  # noqa: E402, F401
    ROOT,
    collection,
    events,
    harness_id,
    harness_time,
    iso_ms,
    js_line,
    js_pretty,
    loop_uuid,
    ms,
    py_pretty,
    result_text,
    sha256_hex,
    sidecar_time,
    tool_for,
    utc,
    write,
)
from demo_loom import loom_boot, loom_id, render_loom  # noqa: E402

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
    demo_verify.EXPECTED_BROKEN.update(s["id"] for s in C.SESSIONS if s.get("broken") or s.get("layout") == "broken")
    problems = demo_verify.verify(sys.modules[__name__])
    for p in problems:
        print("PROBLEM:", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
