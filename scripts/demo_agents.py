"""Claude Code and pi sessions for spool's demo store (see make_demo.py), rendered from the
same store-neutral specs as the other stores. Both agents' stores are read-only for spool.

  assets/demo/claude/projects/<encoded cwd>/<uuid>.jsonl   Claude Code transcripts
                                    .../<uuid>/subagents/agent-<hex>.jsonl  a subagent
  assets/demo/pi/--<encoded cwd>--/<time>_<uuid>.jsonl    pi entry trees (header + entries)

pi's messages are pi-ai AgentMessages, the shape Loop stores, so make_demo.loop_history
builds them; Claude's records are converted from the same messages. Paths in pi's
`parentSession` use /home/demo/.pi/agent/sessions/, which `spool --demo` relocates.
"""

import hashlib
import json
import os
import random
import uuid
from datetime import datetime, timedelta, timezone

PI_HOME = "/home/demo/.pi/agent/sessions/"

CLAUDE_TOOLS = {"read": "Read", "bash": "Bash", "grep": "Grep", "edit": "Edit", "write": "Write"}


def from_ms(ms):
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


def parse_iso(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)


def agent_uuid(store, key):
    return str(uuid.UUID(bytes=hashlib.sha256(("%s:%s" % (store, key)).encode()).digest()[:16], version=4))


def short_id(key, n):
    return hashlib.sha256(("%s/%d" % (key, n)).encode()).hexdigest()[:8]


def claude_dir_name(cwd):
    return "".join(c if c.isalnum() else "-" for c in cwd)


def pi_dir_name(cwd):
    return "--" + cwd.lstrip("/").replace("/", "-").replace(":", "-") + "--"


def claude_input(name, args, cwd):
    path = args.get("path")
    full = path if not path or path.startswith("/") else cwd + "/" + path
    if name == "read":
        return {"file_path": full}
    if name == "edit":
        return {"file_path": full, "old_string": args["oldText"], "new_string": args["newText"]}
    if name == "write":
        return {"file_path": full, "content": args["content"]}
    return dict(args)


# ---------------------------------------------------------------- Claude Code


def claude_records(M, spec, sid, msgs, compactions, rng):
    """Claude Code records for pi-ai messages: prompts, merged assistant blocks, tool
    results as user records, and a compact boundary + summary where the spec compacts."""
    cwd, out, parent = spec["cwd"], [], None
    base = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": sid,
            "version": "2.1.233", "gitBranch": spec.get("branch", "main"), "entrypoint": "cli"}
    at = {c["historyMessageCount"]: c for c in compactions}
    n = 0

    def rec(extra, t):
        nonlocal parent, n
        n += 1
        r = dict(base)
        r.update({"parentUuid": parent, "uuid": agent_uuid("claude-rec", "%s/%d" % (spec["key"], n)),
                  "timestamp": M.iso_ms(t)})
        r.update(extra)
        parent = r["uuid"]
        out.append(r)
        return r

    for i, m in enumerate(msgs):
        t = from_ms(m["timestamp"])
        if i in at:
            c = at[i]
            boundary = rec({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                            "isMeta": False, "level": "info",
                            "compactMetadata": {"trigger": "auto", "preTokens": 48000 + 1000 * i}}, t)
            boundary["logicalParentUuid"], boundary["parentUuid"] = boundary["parentUuid"], None
            rec({"type": "user", "isCompactSummary": True, "isVisibleInTranscriptOnly": True,
                 "message": {"role": "user", "content": "This session is being continued from a previous "
                             "conversation that ran out of context. The conversation is summarized below:\n"
                             + c["summary"]}}, t + timedelta(milliseconds=5))
        if m["role"] == "user":
            rec({"type": "user", "promptSource": "typed",
                 "message": {"role": "user", "content": m["content"]}}, t)
        elif m["role"] == "assistant":
            blocks = []
            for b in m["content"]:
                if b["type"] == "thinking":
                    blocks.append({"type": "thinking", "thinking": b["thinking"], "signature": "EqQBdemo"})
                elif b["type"] == "text":
                    blocks.append({"type": "text", "text": b["text"]})
                elif b["type"] == "toolCall":
                    blocks.append({"type": "tool_use", "id": b["id"], "name": CLAUDE_TOOLS.get(b["name"], b["name"]),
                                   "input": claude_input(b["name"], b["arguments"], cwd)})
            if m.get("stopReason") == "error":
                blocks = [{"type": "text", "text": "API Error: " + m.get("errorMessage", "")}]
            rec({"type": "assistant", "requestId": "req_" + short_id(spec["key"], i),
                 "message": {"id": "msg_" + short_id(spec["key"], 1000 + i), "type": "message", "role": "assistant",
                             "model": "claude-sonnet-4-6", "content": blocks,
                             "stop_reason": "tool_use" if m.get("stopReason") == "toolUse" else "end_turn",
                             "usage": {"input_tokens": m["usage"]["input"], "output_tokens": m["usage"]["output"],
                                       "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}}, t)
        elif m["role"] == "toolResult":
            text = "".join(b.get("text", "") for b in m["content"])
            rec({"type": "user", "message": {"role": "user", "content": [
                {"tool_use_id": m["toolCallId"], "type": "tool_result", "content": text,
                 "is_error": m["isError"]}]}}, t)
    return out


def render_claude(M, spec, built, sessions):
    rng = random.Random(spec["key"])
    sid = agent_uuid("claude", spec["key"])
    spec["id"] = sid
    msgs, compactions, _ = M.loop_history(spec, rng)
    recs = claude_records(M, spec, sid, msgs, compactions, rng)
    pdir = os.path.join(M.ROOT, "claude", "projects", claude_dir_name(spec["cwd"]))
    if spec.get("fork_of"):
        parent = next(s for s in sessions if s["key"] == spec["fork_of"])
        copied = [dict(r, sessionId=sid, forkedFrom={"sessionId": parent["id"], "messageUuid": r["uuid"]})
                  for r in built[parent["key"]]["records"]]
        recs[0]["parentUuid"] = copied[-1]["uuid"]
        recs = copied + recs
    if spec.get("subagent"):
        prompt, answer = spec["subagent"]
        agent = hashlib.sha256(spec["key"].encode()).hexdigest()[:17]
        last = recs[-1]
        t = parse_iso(last["timestamp"]) + timedelta(seconds=2)
        call = "toolu_01demoAgent" + agent[:8]
        sub_base = {"isSidechain": True, "userType": "external", "cwd": spec["cwd"], "sessionId": sid,
                    "version": "2.1.233", "gitBranch": "main", "agentId": agent}
        u1, u2 = agent_uuid("claude-sub", spec["key"] + "/1"), agent_uuid("claude-sub", spec["key"] + "/2")
        sub = [dict(sub_base, parentUuid=None, uuid=u1, type="user", timestamp=M.iso_ms(t),
                    message={"role": "user", "content": prompt}),
               dict(sub_base, parentUuid=u1, uuid=u2, type="assistant", timestamp=M.iso_ms(t + timedelta(seconds=9)),
                    message={"id": "msg_sub" + agent[:6], "type": "message", "role": "assistant",
                             "model": "claude-haiku-4-5-20251001", "content": [{"type": "text", "text": answer}],
                             "stop_reason": "end_turn", "usage": {"input_tokens": 400, "output_tokens": 60}})]
        M.write(os.path.join(pdir, sid, "subagents", "agent-%s.jsonl" % agent),
                "".join(M.js_line(r) + "\n" for r in sub))
        base = {k: last[k] for k in ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "entrypoint")}
        a = dict(base, parentUuid=last["uuid"], uuid=agent_uuid("claude-sub", spec["key"] + "/a"), type="assistant",
                 timestamp=M.iso_ms(t - timedelta(seconds=1)), requestId="req_sub",
                 message={"id": "msg_subcall", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
                          "content": [{"type": "tool_use", "id": call, "name": "Agent",
                                       "input": {"description": "Survey", "prompt": prompt, "subagent_type": "Explore"}}],
                          "stop_reason": "tool_use", "usage": {"input_tokens": 900, "output_tokens": 40}})
        r = dict(base, parentUuid=a["uuid"], uuid=agent_uuid("claude-sub", spec["key"] + "/r"), type="user",
                 timestamp=M.iso_ms(t + timedelta(seconds=10)),
                 message={"role": "user", "content": [{"tool_use_id": call, "type": "tool_result",
                                                       "content": [{"type": "text", "text": answer}]}]},
                 toolUseResult={"status": "completed", "agentId": agent})
        recs += [a, r]
    built[spec["key"]] = {"records": recs}
    lines = [M.js_line(r) for r in recs]
    if spec.get("title"):
        lines.append(M.js_line({"type": "custom-title", "customTitle": spec["title"], "sessionId": sid}))
    text = "".join(l + "\n" for l in lines)
    if spec.get("broken"):
        # A crash: a garbage line mid-file and a record cut off mid-write at the end.
        cut = text.split("\n")
        cut.insert(3, '{"parentUuid":"oops", "type": "user", "message": {"role"')
        text = "\n".join(cut[:-2]) + "\n" + cut[-2][: len(cut[-2]) // 2]
    M.write(os.path.join(pdir, sid + ".jsonl"), text)


# ---------------------------------------------------------------- pi


def pi_entries(M, spec, msgs, compactions):
    """pi entries along one path: a model change, the messages, compactions where the
    spec compacts (firstKeptEntryId = the first kept message's entry)."""
    key = spec["key"]
    ents, parent, ids = [], None, {}
    n = [0]

    def ent(kind, t, **kw):
        nonlocal parent
        n[0] += 1
        e = {"type": kind, "id": short_id(key, n[0]), "parentId": parent, "timestamp": M.iso_ms(t)}
        e.update(kw)
        parent = e["id"]
        ents.append(e)
        return e

    t0 = M.utc(spec["start"])
    model = msgs[1] if len(msgs) > 1 else {}
    ent("model_change", t0, provider=model.get("provider", "anthropic"), modelId=model.get("model", "claude-sonnet-4-5"))
    ent("thinking_level_change", t0 + timedelta(milliseconds=1), thinkingLevel=spec.get("thinking", "medium"))
    at = {c["historyMessageCount"]: c for c in compactions}
    for i, m in enumerate(msgs):
        t = from_ms(m["timestamp"])
        if i in at:
            c = at[i]
            ent("compaction", t - timedelta(seconds=1), summary=c["summary"], tokensBefore=48000 + 900 * i,
                firstKeptEntryId=ids[c["firstKeptMessageIndex"]],
                details={"readFiles": [], "modifiedFiles": []})
        ids[i] = ent("message", t, message=m)["id"]
    return ents


def render_pi(M, spec, built, sessions):
    rng = random.Random(spec["key"])
    sid = agent_uuid("pi", spec["key"])
    spec["id"] = sid
    msgs, compactions, _ = M.loop_history(spec, rng)
    ents = pi_entries(M, spec, msgs, compactions)
    start = M.utc(spec["start"])
    header = {"type": "session", "version": 3, "id": sid, "timestamp": M.iso_ms(start), "cwd": spec["cwd"]}
    if spec.get("fork_of"):
        parent = next(s for s in sessions if s["key"] == spec["fork_of"])
        header["parentSession"] = PI_HOME + built[parent["key"]]["rel"]
        # /fork copies the parent's path up to the chosen message, with the same entry ids.
        copied = built[parent["key"]]["entries"][: spec.get("fork_at", 4)]
        ents[0]["parentId"] = copied[-1]["id"]
        ents = copied + ents
    if spec.get("branch"):
        # /tree back to the end of round 1 after a detour: the detour stays in the file as an
        # abandoned branch, a branch summary records why, and the session goes on after it.
        prompt, reply, summary = spec["branch"]
        k = next(i for i, e in enumerate(ents) if e["type"] == "message" and e["message"]["role"] == "assistant"
                 and e["message"].get("stopReason") == "stop")
        at = ents[k]
        t = from_ms(at["message"]["timestamp"]) + timedelta(seconds=5)
        u = {"type": "message", "id": short_id(spec["key"], 900), "parentId": at["id"], "timestamp": M.iso_ms(t),
             "message": {"role": "user", "content": prompt, "timestamp": M.ms(t)}}
        ta = t + timedelta(seconds=8)
        a = {"type": "message", "id": short_id(spec["key"], 901), "parentId": u["id"], "timestamp": M.iso_ms(ta),
             "message": dict(at["message"], content=[{"type": "text", "text": reply}], timestamp=M.ms(ta))}
        b = {"type": "branch_summary", "id": short_id(spec["key"], 902), "parentId": at["id"],
             "timestamp": M.iso_ms(ta + timedelta(seconds=4)), "fromId": a["id"], "summary": summary}
        rest = ents[k + 1:]
        if rest:
            rest[0]["parentId"] = b["id"]
        ents = ents[:k + 1] + [u, a, b] + rest
    last = ents[-1]["id"]
    if spec.get("name"):
        ents.append({"type": "session_info", "id": short_id(spec["key"], 950), "parentId": last,
                     "timestamp": ents[-1]["timestamp"], "name": spec["name"]})
    if spec.get("label"):
        target = next(e["id"] for e in ents if e["type"] == "message" and e["message"]["role"] == "user")
        ents.append({"type": "label", "id": short_id(spec["key"], 951), "parentId": ents[-1]["id"],
                     "timestamp": ents[-1]["timestamp"], "targetId": target, "label": spec["label"]})
    stamp = M.iso_ms(start).replace(":", "-").replace(".", "-")
    rel = "%s/%s_%s.jsonl" % (pi_dir_name(spec["cwd"]), stamp, sid)
    built[spec["key"]] = {"entries": ents, "rel": rel}
    text = "".join(M.js_line(e) + "\n" for e in [header] + ents)
    if spec.get("broken"):
        cut = text.split("\n")
        cut.insert(4, '{"type":"message","id":"deadbeef","parentId":')
        text = "\n".join(cut[:-2]) + "\n" + cut[-2][: len(cut[-2]) // 2]
    M.write(os.path.join(M.ROOT, "pi", rel), text)


def verify(M, problems, expected_broken):
    """Each Claude and pi file parses line by line (broken ones excepted); counts them."""
    n = {"claude": 0, "pi": 0}
    for store, top in (("claude", os.path.join(M.ROOT, "claude", "projects")), ("pi", os.path.join(M.ROOT, "pi"))):
        for d, _, fs in os.walk(top):
            for f in fs:
                if not f.endswith(".jsonl"):
                    continue
                p = os.path.join(d, f)
                if "subagents" not in d:
                    n[store] += 1
                sid = f[:-6].split("_")[-1]
                try:
                    for line in open(p, encoding="utf-8").read().split("\n"):
                        if line:
                            json.loads(line)
                except ValueError:
                    if sid not in expected_broken:
                        problems.append("unparsable line in " + p)
    return n
