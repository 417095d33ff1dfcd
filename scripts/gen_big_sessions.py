#!/usr/bin/env python3
"""Write one huge session per writable store under HOME-like DIR, for memory measurements
(issue 11, item 8): a loom log of LINES lines, an agent-harness record of about HARNESS_MB
MiB, and a Loop v3 session of LOOP_MESSAGES messages (generation hash and counts committed
in meta.json; no index.json, so spool rebuilds it in memory).

usage: gen_big_sessions.py DIR [LINES=1000000] [HARNESS_MB=117] [LOOP_MESSAGES=1000000]
then:  HOME=DIR /usr/bin/time -v spool show loom:20260314-091502 --last 1 >/dev/null
"""
import hashlib
import json
import os
import sys

FILLER = "lorem ipsum dolor sit amet " * 8
T = "2026-03-14T09:16:00+01:00"


def loom(home, lines):
    d = os.path.join(home, ".loom/sessions")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "20260314-091502.jsonl"), "w") as f:
        f.write(json.dumps({"kind": "meta", "time": T, "model": "m", "cwd": "/p"}) + "\n")
        roles = ["user", "assistant", "tool", "assistant"]
        for i in range(lines - 1):
            m = {"role": roles[i % 4], "content": f"{i} {FILLER}"}
            f.write(json.dumps({"kind": "message", "time": T, "message": m}) + "\n")


def harness(home, mb):
    d = os.path.join(home, ".agent-harness/memory/sessions")
    os.makedirs(d, exist_ok=True)
    msgs, size, i = [{"role": "system", "content": "You are an assistant."}], 0, 0
    while size < mb * 1024 * 1024 // 2:
        role = ["user", "assistant"][i % 2]
        text = f"<user_input>\n{i} {FILLER}\n</user_input>" if role == "user" else f"{i} {FILLER}"
        msgs.append({"role": role, "content": text})
        size += len(text) + 40
        i += 1
    rec = {"id": "Qm3xT8vLk2pR9aZc", "created_at": "2026-03-14T09:00:00+00:00",
           "updated_at": "2026-03-14T10:00:00+00:00", "summary": "", "messages": msgs,
           "transcript": msgs, "title": "big", "archived": False, "state": {},
           "compactions": [], "project_root": "/p", "status": "saved"}
    with open(os.path.join(d, "Qm3xT8vLk2pR9aZc.json"), "w") as f:
        json.dump(rec, f, indent=2)


def loop(home, count):
    sid = "3f6b2c1e-8a4d-4e2f-9b7c-1d2e3f4a5b6c"
    d = os.path.join(home, ".loop/sessions/767af75ec9c3c6ac7b4a00e5", sid)
    os.makedirs(d, exist_ok=True)
    h, n, ts = hashlib.sha256(), 0, 1773480902113
    with open(os.path.join(d, "messages.jsonl"), "wb") as f:
        for i in range(count):
            if i % 2 == 0:
                m = {"role": "user", "content": [{"type": "text", "text": f"{i} {FILLER}"}],
                     "timestamp": ts + i}
            else:
                m = {"role": "assistant", "content": [{"type": "text", "text": f"{i} {FILLER}"}],
                     "api": "openai-responses", "provider": "openai", "model": "gpt-5.5",
                     "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0,
                               "totalTokens": 2, "cost": {"input": 0, "output": 0,
                               "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                     "stopReason": "stop", "timestamp": ts + i}
            line = (json.dumps(m, separators=(",", ":")) + "\n").encode()
            h.update(line)
            n += len(line)
            f.write(line)
    header = {"format": "loop-session", "version": 2, "id": sid, "cwd": "/home/user/projects/acme-api",
              "createdAt": "2026-03-14T09:35:01.870Z", "updatedAt": "2026-03-14T09:36:54.102Z",
              "unread": False, "model": {"provider": "openai", "id": "gpt-5.5"},
              "title": {"text": "big", "source": "user", "messageIndices": []},
              "permissionPreset": "workspace-write"}
    meta = {"format": "loop-session", "version": 3, "header": header, "generation": h.hexdigest(),
            "start": 0, "bytes": n, "messageCount": count}
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)


if __name__ == "__main__":
    home = sys.argv[1]
    args = [int(a) for a in sys.argv[2:]] + [1000000, 117, 1000000][len(sys.argv) - 2:]
    loom(home, args[0])
    harness(home, args[1])
    loop(home, args[2])
