"""Ids, times, serialisation and the store-neutral conversation walk shared by make_demo.py's
renderers (Loop, loom, agent-harness) and demo_agents.py."""

import base64
import hashlib
import json
import os
import uuid
from datetime import datetime, timedelta, timezone

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
