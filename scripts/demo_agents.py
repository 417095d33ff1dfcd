"""Claude Code, pi and Codex CLI sessions for spool's demo store (see make_demo.py), rendered from the
same store-neutral specs as the other stores. Both agents' stores are read-only for spool.

  assets/demo/claude/projects/<encoded cwd>/<uuid>.jsonl   Claude Code transcripts
                                    .../<uuid>/subagents/agent-<hex>.jsonl  a subagent
  assets/demo/pi/--<encoded cwd>--/<time>_<uuid>.jsonl    pi entry trees (header + entries)
  assets/demo/codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl   Codex rollouts
  assets/demo/codex/archived_sessions/rollout-<time>-<uuid>.jsonl     an archived thread
  assets/demo/codex/session_index.jsonl                             thread names

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


# ---------------------------------------------------------------- Codex CLI


def codex_tool(name, args, cwd):
    """A neutral tool call as Codex makes it: shell commands through exec_command, edits as an
    apply_patch custom tool call (free-form patch text)."""
    if name in ("edit", "write"):
        if name == "edit":
            body = "*** Update File: %s\n@@\n%s\n%s\n" % (
                args["path"], "\n".join("-" + l for l in args["oldText"].split("\n")),
                "\n".join("+" + l for l in args["newText"].split("\n")))
        else:
            body = "*** Add File: %s\n%s\n" % (args["path"], "\n".join("+" + l for l in args["content"].split("\n")))
        return "custom", "apply_patch", "*** Begin Patch\n" + body + "*** End Patch\n"
    if name == "read":
        cmd = "sed -n '1,200p' %s" % args["path"]
    elif name == "grep":
        cmd = "rg -n '%s' %s" % (args["pattern"], args["path"])
    else:
        cmd = args["command"]
    return "function", "exec_command", json.dumps({"cmd": cmd, "workdir": cwd})


def codex_records(M, spec, sid, msgs, compactions, model):
    """Codex rollout lines (after the session_meta) for pi-ai messages: per user turn a
    turn_context, task_started, the injected context on the first turn, the prompt as a user
    response item plus its user_message event, reasoning / assistant / tool-call response items
    with their outputs, a token_count and task_complete; a compacted record (summary and
    replacement_history) where the spec compacts."""
    cwd, key, out = spec["cwd"], spec["key"], []
    at = {c["historyMessageCount"]: c for c in compactions}
    kinds, turn, last_text, total = {}, None, None, 0

    def rec(t, kind, payload):
        out.append({"timestamp": M.iso_ms(t), "type": kind, "payload": payload})

    def close(t):
        if turn:
            rec(t, "event_msg", {"type": "token_count", "info": {
                "total_token_usage": {"input_tokens": total, "cached_input_tokens": total * 3 // 4,
                                      "output_tokens": total // 40, "reasoning_output_tokens": total // 80,
                                      "total_tokens": total + total // 40},
                "last_token_usage": {"input_tokens": total, "cached_input_tokens": total * 3 // 4,
                                     "output_tokens": total // 40, "reasoning_output_tokens": total // 80,
                                     "total_tokens": total + total // 40},
                "model_context_window": 258400}, "rate_limits": None})
            rec(t + timedelta(milliseconds=1), "event_msg",
                {"type": "task_complete", "turn_id": turn, "last_agent_message": last_text})

    users = []
    for i, m in enumerate(msgs):
        t = from_ms(m["timestamp"])
        if i in at:
            c = at[i]
            tc = t - timedelta(seconds=2)
            rec(tc, "compacted", {"message": c["summary"], "replacement_history": [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": u}]}
                for u in users[-1:]]})
            rec(tc + timedelta(milliseconds=1), "event_msg", {"type": "context_compacted"})
        if m["role"] == "user":
            close(t - timedelta(milliseconds=50))
            turn = agent_uuid("codex-turn", "%s/%d" % (key, i))
            rec(t - timedelta(milliseconds=20), "turn_context", {
                "turn_id": turn, "cwd": cwd, "approval_policy": "on-request",
                "sandbox_policy": {"type": "workspace-write", "writable_roots": [], "network_access": False,
                                   "exclude_tmpdir_env_var": False, "exclude_slash_tmp": False},
                "model": model["id"], "effort": model.get("effort", "medium"), "summary": "auto"})
            rec(t - timedelta(milliseconds=19), "event_msg",
                {"type": "task_started", "turn_id": turn, "model_context_window": 258400})
            if i == 0:
                rec(t - timedelta(milliseconds=18), "response_item", {"type": "message", "role": "developer", "content": [
                    {"type": "input_text", "text": "<permissions instructions>\nFilesystem sandboxing: "
                     "workspace-write. Approvals: on-request.\n</permissions instructions>"}]})
                rec(t - timedelta(milliseconds=17), "response_item", {"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": "<environment_context>\n  <cwd>%s</cwd>\n  <shell>bash</shell>\n"
                     "</environment_context>" % cwd}]})
            text = m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
            users.append(text)
            rec(t, "response_item", {"type": "message", "role": "user",
                                     "content": [{"type": "input_text", "text": text}]})
            rec(t + timedelta(milliseconds=1), "event_msg", {"type": "user_message", "message": text, "images": [],
                                                             "local_images": [], "text_elements": []})
        elif m["role"] == "assistant":
            total = m["usage"]["input"] * 4
            for j, b in enumerate(m["content"]):
                tb = t + timedelta(milliseconds=j)
                if b["type"] == "thinking":
                    rec(tb, "response_item", {"type": "reasoning", "summary": [
                        {"type": "summary_text", "text": "**" + b["thinking"] + "**"}], "content": None,
                        "encrypted_content": "gAAAAABdemo" + short_id(key, 2000 + i)})
                elif b["type"] == "text":
                    last_text = b["text"]
                    rec(tb, "response_item", {"type": "message", "role": "assistant",
                                              "content": [{"type": "output_text", "text": b["text"]}]})
                    rec(tb, "event_msg", {"type": "agent_message", "message": b["text"]})
                elif b["type"] == "toolCall":
                    kind, name, arg = codex_tool(b["name"], b["arguments"], cwd)
                    kinds[b["id"]] = kind
                    if kind == "custom":
                        rec(tb, "response_item", {"type": "custom_tool_call", "status": "completed",
                                                  "call_id": b["id"], "name": name, "input": arg})
                    else:
                        rec(tb, "response_item", {"type": "function_call", "name": name, "arguments": arg,
                                                  "call_id": b["id"]})
        elif m["role"] == "toolResult":
            text = "".join(b.get("text", "") for b in m["content"])
            if kinds.get(m["toolCallId"]) == "custom":
                rec(t, "response_item", {"type": "custom_tool_call_output", "call_id": m["toolCallId"],
                                         "output": json.dumps({"output": "Success. Updated the following files:\n"
                                                               "M %s\n" % text.split(" ")[-1].rstrip("."),
                                                               "metadata": {"exit_code": 0, "duration_seconds": 0.0}})})
            else:
                code = 1 if m["isError"] else 0
                rec(t, "response_item", {"type": "function_call_output", "call_id": m["toolCallId"],
                                         "output": "Process exited with code %d\nOutput:\n%s" % (code, text)})
    close(from_ms(msgs[-1]["timestamp"]) + timedelta(milliseconds=5))
    return out


def codex_meta(M, spec, sid, t, **extra):
    meta = {"id": sid, "timestamp": M.iso_ms(t), "cwd": spec["cwd"], "originator": "codex_cli_rs",
            "cli_version": "0.147.0", "source": "cli", "model_provider": "openai"}
    meta.update(extra)
    meta["git"] = {"commit_hash": hashlib.sha256(spec["key"].encode()).hexdigest()[:8], "branch": "main"}
    return {"timestamp": M.iso_ms(t + timedelta(milliseconds=12)), "type": "session_meta", "payload": meta}


def codex_path(M, spec, sid, start):
    name = "rollout-%s-%s.jsonl" % (start.strftime("%Y-%m-%dT%H-%M-%S"), sid)
    if spec.get("archived"):
        return os.path.join(M.ROOT, "codex", "archived_sessions", name)
    return os.path.join(M.ROOT, "codex", "sessions", start.strftime("%Y/%m/%d"), name)


def render_codex(M, spec, built, sessions):
    """One Codex rollout (the demo machine runs on UTC, so the file name's local time is UTC);
    a fork starts with its own meta and a re-stamped copy of its parent's rollout; a subagent
    is a second rollout whose meta names the parent thread."""
    rng = random.Random(spec["key"])
    sid = agent_uuid("codex", spec["key"])
    spec["id"] = sid
    msgs, compactions, model = M.loop_history(spec, rng)
    start = M.utc(spec["start"])
    recs = codex_records(M, spec, sid, msgs, compactions, model)
    head = [codex_meta(M, spec, sid, start)]
    if spec.get("fork_of"):
        parent = next(s for s in sessions if s["key"] == spec["fork_of"])
        head[0]["payload"]["forked_from_id"] = parent["id"]
        stamp = M.iso_ms(start + timedelta(milliseconds=13))
        head += [dict(r, timestamp=stamp) for r in built[parent["key"]]["records"]]
    if spec.get("subagent"):
        nick, prompt, answer = spec["subagent"]
        child = agent_uuid("codex-sub", spec["key"])
        t = parse_iso(recs[-1]["timestamp"]) + timedelta(seconds=2)
        call = "call_demoSpawn" + short_id(spec["key"], 3000)
        turn = recs[0]["payload"]["turn_id"]
        done = recs[-1]
        recs = recs[:-1] + [
            {"timestamp": M.iso_ms(t), "type": "response_item", "payload": {
                "type": "function_call", "name": "spawn_agent", "call_id": call,
                "arguments": json.dumps({"message": prompt, "agent_type": "explorer"})}},
            {"timestamp": M.iso_ms(t + timedelta(milliseconds=300)), "type": "response_item", "payload": {
                "type": "function_call_output", "call_id": call,
                "output": json.dumps({"agent_id": child, "nickname": nick})}},
            {"timestamp": M.iso_ms(t + timedelta(milliseconds=301)), "type": "event_msg", "payload": {
                "type": "sub_agent_activity", "kind": "spawned", "event_id": call, "agent_thread_id": child}},
            {"timestamp": M.iso_ms(t + timedelta(seconds=14)), "type": "response_item", "payload": {
                "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]}},
            dict(done, timestamp=M.iso_ms(t + timedelta(seconds=14, milliseconds=1)),
                 payload=dict(done["payload"], last_agent_message=answer))]
        ct = t + timedelta(milliseconds=100)
        cturn = agent_uuid("codex-turn", spec["key"] + "/sub")
        sub_spec = dict(spec, key=spec["key"] + "/sub")
        spawn = {"parent_thread_id": sid, "depth": 1, "agent_path": "/root/" + nick.lower(),
                 "agent_nickname": nick, "agent_role": "explorer"}
        lines = [codex_meta(M, sub_spec, child, ct, source={"subagent": {"thread_spawn": spawn}},
                            thread_source="subagent", parent_thread_id=sid, agent_nickname=nick,
                            agent_role="explorer", agent_path=spawn["agent_path"])]
        ev = [("turn_context", {"turn_id": cturn, "cwd": spec["cwd"], "approval_policy": "never",
                                "sandbox_policy": {"type": "read-only"}, "model": model["id"], "effort": "low",
                                "summary": "auto"}),
              ("event_msg", {"type": "task_started", "turn_id": cturn, "model_context_window": 258400}),
              ("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}),
              ("event_msg", {"type": "user_message", "message": prompt, "images": [], "local_images": [],
                             "text_elements": []}),
              ("response_item", {"type": "function_call", "name": "exec_command", "call_id": call + "x",
                                 "arguments": json.dumps({"cmd": "rg -n 'fn walk' src/gc.rs", "workdir": spec["cwd"]})}),
              ("response_item", {"type": "function_call_output", "call_id": call + "x",
                                 "output": "Process exited with code 0\nOutput:\nsrc/gc.rs:31:fn walk_tags(repo: &Repo)"}),
              ("response_item", {"type": "message", "role": "assistant",
                                 "content": [{"type": "output_text", "text": answer}]}),
              ("event_msg", {"type": "task_complete", "turn_id": cturn, "last_agent_message": answer})]
        for k, (kind, payload) in enumerate(ev):
            lines.append({"timestamp": M.iso_ms(ct + timedelta(seconds=k + 1)), "type": kind, "payload": payload})
        M.write(codex_path(M, sub_spec, child, ct), "".join(M.js_line(r) + "\n" for r in lines))
    built[spec["key"]] = {"records": head + recs}
    text = "".join(M.js_line(r) + "\n" for r in head + recs)
    if spec.get("broken"):
        # A crash: a garbage line mid-file and a record cut off mid-write at the end.
        cut = text.split("\n")
        cut.insert(5, '{"timestamp":"2026-11-28T11:30:0')
        text = "\n".join(cut[:-2]) + "\n" + cut[-2][: len(cut[-2]) // 2]
    M.write(codex_path(M, spec, sid, start), text)
    if spec.get("name"):
        index = os.path.join(M.ROOT, "codex", "session_index.jsonl")
        old = open(index, encoding="utf-8").read() if os.path.exists(index) else ""
        M.write(index, old + M.js_line({"id": sid, "thread_name": spec["name"],
                                        "updated_at": recs[-1]["timestamp"][:19] + "Z"}) + "\n")


def verify(M, problems, expected_broken):
    """Each Claude and pi file parses line by line (broken ones excepted); counts them."""
    n = {"claude": 0, "pi": 0, "codex": 0}
    for store, top in (("claude", os.path.join(M.ROOT, "claude", "projects")), ("pi", os.path.join(M.ROOT, "pi")),
                       ("codex", os.path.join(M.ROOT, "codex"))):
        for d, _, fs in os.walk(top):
            for f in fs:
                if not f.endswith(".jsonl") or f == "session_index.jsonl":
                    continue
                p = os.path.join(d, f)
                if "subagents" not in d:
                    n[store] += 1
                sid = f[:-6].split("_")[-1][-36:]
                try:
                    for line in open(p, encoding="utf-8").read().split("\n"):
                        if line:
                            json.loads(line)
                except ValueError:
                    if sid not in expected_broken:
                        problems.append("unparsable line in " + p)
    return n
