#!/usr/bin/env python3
"""Side-by-side start-up and keystroke benchmark of spool (or any picker) in a real terminal.

Drives the release binary in a private tmux server, polls the screen as fast as tmux answers,
and prints one markdown table. Everything it needs is made here: corpora from the generators
(spool's own `examples/gen_corpus.rs`, and /work/shared/bench/gen_*.py if given), a private
HOME and cache per run.

    cargo build --release --example gen_corpus && cargo build --release
    (SPOOL_BIN=PATH runs another build of spool)
    python3 scripts/bench_tui.py                       # 10k and 100k, 5 runs each
    python3 scripts/bench_tui.py --sizes 10000 --runs 3
    python3 scripts/bench_tui.py --sizes 100000 --runs 5 --control   # first paint also as tmux
                                    # reads it (see CONTROL), the floor's too
    python3 scripts/bench_tui.py --sizes 100000 --paints 20   # the first paints alone:
                                    # 20 warm and 20 cold starts and 20 of the floor, in turn
    python3 scripts/bench_tui.py --picker 'other=other-picker --flag'   # runs beside spool
    python3 scripts/bench_tui.py --existing 'claude 10k=--claude-dir H/.claude --codex-dir /E ...'
                                    # an existing corpus instead, spool run with those flags

Figures (medians over runs, ms unless noted):
  first paint warm/cold  launch -> first screen with any text (warm: catalog present), as
                         the first `capture-pane` poll that shows it
    (tmux's read)        launch -> the first of the pane's writes holding text, as tmux reads
                         it (a control-mode client's `%output`; not the poll's fork and exec)
  loaded                 launch -> screen shows no "loading" and stays still for --quiet ms
  loaded and checked     spool only, warm: spool's own launch -> its last store's warm check
                         (SPOOL_KEYTRACE `checked_X_at`); the screen cannot show it, as the head
                         is on screen throughout. Keys are typed after it, once the status
                         bar no longer says "loading" (checks can come --quiet ms apart).
  key median/p99         key sent -> last screen change before --quiet ms of stillness
                         (the index's "indexing N / M" progress is not counted as a change)
  peak RSS               VmHWM of the picker process after the keystrokes (MB), warm start
                         with a current index (the cold run waits for spool's index build)
    index child          the largest peak RSS of spool's index child processes (`spool
                         __index`, which write the full-text index) that ran in the runs'
                         traces (the priming builds), from SPOOL_KEYTRACE
  quit                   spool only: `q` (after Escape leaves the query) -> the process has
                         exited, the wait for the shell's prompt
  list --json --all      wall time of `spool list --json --all`, warm catalog and cold
Floors: the same figure for a program that prints a screenful at once (harness cost), and
`cat` of the bytes `list` reads (cold: every session file; warm: the catalog).

    python3 scripts/bench_tui.py --sizes 10000 --runs 3 --during-build
                                    # keystrokes while the first full-text index build runs
  --during-build: the index directory in spool's cache is deleted (the catalog is kept), spool
  starts, and keys are typed while it rebuilds the index (the quick search `/fixlogin`, Esc,
  again, up to --build-keys keys); per key, the time to a settled screen (the status bar's
  progress figures masked, as they change on their own) and whether the status bar showed
  "indexing N / M" when the key settled. Prints median/p99 of the keys typed while indexing.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPOOL = os.environ.get("SPOOL_BIN") or os.path.join(ROOT, "target", "release", "spool")
GEN = os.path.join(ROOT, "target", "release", "examples", "gen_corpus")
SOCK = "spool-bench-%d" % os.getpid()


def tmux(*args):
    return subprocess.run(["tmux", "-L", SOCK, *args], capture_output=True, text=True).stdout


def alive(pid):
    """Whether `pid` still runs (a zombie has ended: only its parent's wait is left)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def kill_server(timeout_s=5.0):
    """End the tmux server and wait until it and the programs in its panes are gone.
    `kill-server` returns before they are: a start right after it raced the last run's exit
    (its tmux server and a picker with 80 MB to unmap), and a warm start's process began up
    to 22 ms late, or its `new-session` found the dying server ("server exited
    unexpectedly")."""
    pids = [int(p) for p in tmux("list-panes", "-a", "-F", "#{pane_pid}").split() if p.isdigit()]
    server = tmux("display", "-p", "#{pid}").strip()
    if server.isdigit():
        pids.append(int(server))
    tmux("kill-server")
    t0 = time.perf_counter()
    while any(alive(p) for p in pids) and time.perf_counter() - t0 < timeout_s:
        time.sleep(0.002)


def screen():
    return tmux("capture-pane", "-p", "-t", "b")


# The first paint as tmux receives it. `capture-pane` is a fork and exec of a tmux client
# per poll, and at 100k sessions under load the poll in flight when spool's first frame
# landed took 18-70 ms (`strace -e write` on spool: the frame written 3-5 ms after its
# exec), so the polled figure measures the poll as much as the picker. A control-mode client
# (`tmux -C`) is told of each of the pane's writes as tmux reads them (`%output`); a stamper
# process, started before the launch and fed the client's output, notes the first one
# holding text (a thread of the harness would share the interpreter with the polls and be
# late by their turns). The client then detaches, and the rest of the run has no client
# attached, as with `new-session -d`. Off unless `--control`.
CONTROL = {"on": False, "proc": None, "ms": None, "ready": threading.Event()}

# Reads the control client's lines on stdin; prints `S <clock>` at the first (the session
# exists) and `T <clock>` at the first `%output` with text, escape sequences removed (tmux
# writes bytes below 32, and backslash, as three octal digits); then drains to EOF.
# time.perf_counter is CLOCK_MONOTONIC, the same clock in both processes.
STAMPER = r"""
import re, sys, time
esc = re.compile(r"\x1b(\[[0-9;?<=>]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78DEHM])")
out = sys.stdout
out.write("R\n"); out.flush()
seen = text = False
for line in sys.stdin.buffer:
    now = time.perf_counter()
    if not seen:
        seen = True
        out.write("S %r\n" % now); out.flush()
    if not text and line.startswith(b"%output "):
        parts = line.decode("utf-8", "replace").rstrip("\n").split(" ", 2)
        raw = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), parts[2] if len(parts) > 2 else "")
        if esc.sub("", raw).strip():
            text = True
            out.write("T %r\n" % now); out.flush()
"""


def control_start(argv):
    """Start the stamper, then the control client that makes the session; returns t0."""
    r, w = os.pipe()
    stamper = subprocess.Popen([sys.executable, "-c", STAMPER], stdin=r, stdout=subprocess.PIPE)
    os.close(r)
    stamper.stdout.readline()
    t0 = time.perf_counter()
    p = subprocess.Popen(["tmux", "-L", SOCK, "-C", *argv], stdin=subprocess.PIPE, stdout=w,
                         stderr=subprocess.DEVNULL)
    os.close(w)
    CONTROL["proc"] = p
    threading.Thread(target=control_stamps, args=(stamper, t0), daemon=True).start()
    # As `new-session -d` returns once the session exists: the client's first line is the
    # command's answer (or the session's output, which comes after it).
    CONTROL["ready"].wait(5)
    return t0


def control_stamps(stamper, t0):
    for line in stamper.stdout:
        kind, at = line.split()
        if kind == b"S":
            CONTROL["ready"].set()
        elif kind == b"T":
            CONTROL["ms"] = (float(at) - t0) * 1000
            detach()
    stamper.wait()


def detach():
    p = CONTROL["proc"]
    if p is not None and p.poll() is None:
        try:
            p.stdin.write(b"detach-client\n")
            p.stdin.flush()
        except OSError:
            pass


def start(cmd, env):
    """Start `cmd` (argv) in a fresh 120x30 pane; returns the launch time. With CONTROL on,
    the session is made by a control-mode client whose first text is stamped (`control_ms`)."""
    kill_server()
    envs = []
    for k, v in env.items():
        envs += ["-e", "%s=%s" % (k, v)]
    argv = ["new-session", "-s", "b", "-x", "120", "-y", "30", *envs, "--", *cmd]
    CONTROL["ms"] = None
    CONTROL["ready"].clear()
    if CONTROL["on"]:
        return control_start(argv)
    t0 = time.perf_counter()
    tmux("new-session", "-d", *argv[1:])
    return t0


def shown(figs):
    """The figures to print: the control-mode ones only when they were taken."""
    return {k: v for k, v in figs.items() if CONTROL["on"] or "control mode" not in k}


def control_ms():
    """Launch to the first text tmux read from the pane (None without CONTROL); detaches
    the control client if it is still attached (a picker that printed no text)."""
    detach()
    return CONTROL["ms"]


def pane_pid():
    out = tmux("display", "-p", "-t", "b", "#{pane_pid}").strip()
    return int(out) if out.isdigit() else None


def peak_rss_mb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def watch(t0, quiet_ms, timeout_s, busy=("loading",)):
    """Poll until the screen is still for quiet_ms with no `busy` word; returns
    (first paint ms, settled ms, last screen)."""
    first = None
    last, last_change = "", t0
    while time.perf_counter() - t0 < timeout_s:
        s = screen()
        now = time.perf_counter()
        if first is None and s.strip():
            first = (now - t0) * 1000
        if s != last:
            last, last_change = s, now
        elif first is not None and (now - last_change) * 1000 >= quiet_ms and not any(
            b in s for b in busy
        ):
            break
    return first, (last_change - t0) * 1000, last


# The background index's progress ("indexing 2,300 / 10,000") changes the status line
# every few hundred ms while a first build runs; it is not the key's doing, and counting
# it made one key of a run look like a 4 s stall. Keys are timed on the rest of the screen.
# The padding after it goes too: the row count is right-aligned, so "indexing 950 / 10,000"
# becoming "indexing 1,000 / 10,000" shifted the padding, and that counted as the key's
# change (a third of the p99 outliers of keys typed during a build, issue 8).
# Beside the row count ("indexing 3,100 / 10,000 · 9,582 sessions") it goes whole, with
# the padding before it, so its coming and going is not the key's either.
INDEXING = re.compile(r"indexing [0-9,]+ / [0-9,]+")
INDEXING_PADDED = re.compile(r"indexing [0-9,]+ / [0-9,]+ *")
INDEXING_BY_COUNT = re.compile(r" +(indexing [0-9,]+ / [0-9,]+ · )?([0-9,]+ sessions?)")


def masked(s):
    """The screen without the index's progress figures, which change on their own."""
    return INDEXING_PADDED.sub("indexing ", INDEXING_BY_COUNT.sub(r" \2", s))


def key_settled_masked(key, quiet_ms, timeout_s=10):
    """Key sent to the last change of the masked screen before quiet_ms of stillness; `key`
    is literal text, or a tmux key name in <angle brackets>. Returns (ms, whether the
    status bar showed indexing at the end)."""
    before = masked(screen())
    t0 = time.perf_counter()
    if key.startswith("<"):
        tmux("send-keys", "-t", "b", key[1:-1])
    else:
        tmux("send-keys", "-t", "b", "-l", key)
    last, last_change, raw = before, t0, ""
    while time.perf_counter() - t0 < timeout_s:
        raw = screen()
        s, now = masked(raw), time.perf_counter()
        if s != last:
            last, last_change = s, now
        elif last != before and (now - last_change) * 1000 >= quiet_ms:
            break
    return (last_change - t0) * 1000, bool(INDEXING.search(raw))


def key_to_settled(key, quiet_ms, timeout_s=10):
    return key_settled_masked(key, quiet_ms, timeout_s)[0]


def quit_ms(pid, quiet_ms, timeout_s=10):
    """Leave the query (Escape), then `q` sent to the picker's exit: how long the shell's
    prompt waits after a quit (None if it did not exit)."""
    key_to_settled("<Escape>", quiet_ms)
    t0 = time.perf_counter()
    tmux("send-keys", "-t", "b", "q")
    while alive(pid):
        if time.perf_counter() - t0 > timeout_s:
            return None
        time.sleep(0.0005)
    return (time.perf_counter() - t0) * 1000


def during_build(a):
    """Keystrokes while the first full-text index build runs (issue 8)."""
    load = os.getloadavg()
    for n in [int(s) for s in a.sizes.split(",")]:
        c = corpus(a.work, n)
        home = os.path.join(a.work, "home-%d" % n)
        env = env_for(home)
        cmd = spool_cmd(c)
        trace = os.path.join(a.work, "keytrace-%d.txt" % n)
        if a.keytrace:
            env["SPOOL_KEYTRACE"] = trace
        # A first start writes the catalog (and the index, deleted below).
        t0 = start(cmd, env)
        watch(t0, a.quiet, a.timeout)
        kill_server()
        typed, idle, shown, rss = [], [], 0, []
        if os.path.exists(trace):
            os.remove(trace)
        for _ in range(a.runs):
            shutil.rmtree(home + "/.cache/spool/index", ignore_errors=True)
            t0 = start(cmd, env)
            while time.perf_counter() - t0 < a.timeout and "sessions" not in screen():
                time.sleep(0.005)
            seq = (list(a.keys) + ["<Escape>"]) * 100
            for k in seq[: a.build_keys]:
                ms, indexing = key_settled_masked(k, a.quiet)
                (typed if indexing else idle).append(ms)
                shown += indexing
            pid = pane_pid()
            rss.append(peak_rss_mb(pid) if pid else None)
            kill_server()
        print("load average at start: %.2f %.2f %.2f on %d cores, at end %.2f; %d runs"
              % (*load, os.cpu_count(), os.getloadavg()[0], a.runs))
        print("**%s sessions: keystrokes during the first index build**\n" % format(n, ","))
        print("| what | figure |\n| --- | --- |")
        print("| keys settled while the status bar showed indexing | %d of %d |"
              % (shown, len(typed) + len(idle)))
        print("| key settled while indexing, median | %s ms |" % fmt(pct(typed, 50)))
        print("| key settled while indexing, p99 | %s ms |" % fmt(pct(typed, 99)))
        print("| key settled after indexing, median | %s ms |" % fmt(pct(idle, 50)))
        print("| peak RSS (index built in the run) | %s |" % fmt(pct(rss, 50), " MB"))
        if a.keytrace:
            inside = keytrace_ms(trace)
            print("| spool's own share, key read to frame written (all keys, SPOOL_KEYTRACE),"
                  " median / p99 / max | %.1f / %.1f / %.1f ms (n=%d) |"
                  % (pct(inside, 50), pct(inside, 99), max(inside), len(inside)))
        print()
    kill_server()


def keytrace_ms(path):
    """spool's `key_to_drawn` figures from a SPOOL_KEYTRACE file (ms, one per key)."""
    try:
        with open(path) as f:
            return [float(l.split()[1]) for l in f if l.startswith("key_to_drawn ")]
    except OSError:
        return [0.0]


def pct(v, p):
    v = sorted(x for x in v if x is not None)
    if not v:
        return None
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def fmt(x, unit=""):
    return "–" if x is None else ("%s%s" % (format(round(x), ","), unit))


def corpus(work, n):
    d = os.path.join(work, "corpus-%d" % n)
    if not os.path.exists(os.path.join(d, ".done")):
        shutil.rmtree(d, ignore_errors=True)
        subprocess.run([GEN, d, str(n)], check=True, stdout=subprocess.DEVNULL)
        open(os.path.join(d, ".done"), "w").close()
    return d


def spool_cmd(c, extra=()):
    return [SPOOL, "--loop-dir", c + "/loop", "--loom-dir", c + "/loom",
            "--harness-dir", c + "/harness", "--claude-dir", c + "/claude", *extra]


def env_for(home):
    os.makedirs(home, exist_ok=True)
    return {"HOME": home, "XDG_CACHE_HOME": home + "/.cache", "XDG_DATA_HOME": home + "/.data",
            "XDG_CONFIG_HOME": home + "/.config", "TERM": "xterm-256color"}


def wait_checked(trace, quiet_ms, timeout_s):
    """Wait until spool's trace has logged each store's warm check (`phase checked_X_at MS`,
    since spool's launch) and no more come for quiet_ms; returns the last one's MS."""
    t0, seen, changed = time.perf_counter(), -1, time.perf_counter()
    while time.perf_counter() - t0 < timeout_s:
        try:
            at = [float(l.split()[2]) for l in open(trace) if l.startswith("phase checked_")
                  and l.split()[1].endswith("_at")]
        except OSError:
            at = []
        if len(at) != seen:
            seen, changed = len(at), time.perf_counter()
        elif at and (time.perf_counter() - changed) * 1000 >= quiet_ms:
            return max(at)
        time.sleep(0.02)
    return None


def wait_not_loading(timeout_s):
    """Wait until the screen no longer says "loading" (spool's status bar while any store is
    still read or checked)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout_s and "loading" in screen():
        time.sleep(0.02)


def run_picker(cmd, env, cache, a, keys):
    """One cold and one warm start of `cmd`; returns a dict of figures."""
    out = {}
    cold_trace = os.path.join(a.work, "cold-trace.txt")
    if cache:
        shutil.rmtree(cache, ignore_errors=True)
        if os.path.exists(cold_trace):
            os.remove(cold_trace)
    # Traced (spool only) for its index child's peak: the cold run builds the index.
    t0 = start(cmd, {**env, "SPOOL_KEYTRACE": cold_trace} if cache else env)
    out["cold_first"], out["cold_loaded"], _ = watch(t0, a.quiet, a.timeout)
    out["cold_output"] = control_ms()
    # Let the first full-text index build finish (spool's status bar says "indexing"), so
    # the warm start below runs with a current index: else its peak RSS is the build's.
    # At 100k the build starts seconds after the list is loaded, so first wait for its
    # progress to show (a small corpus may finish between two polls: 30 s at most; the
    # build of 10k pi sessions, 1.2 GB, showed after about 10 s).
    appear = time.perf_counter()
    while time.perf_counter() - appear < 30 and "indexing" not in screen():
        time.sleep(0.02)
    watch(t0, a.quiet, a.timeout, busy=("loading", "indexing"))
    kill_server()
    if cache:
        child_peaks(cold_trace)
        prime(cmd, env, a)
    trace = os.path.join(a.work, "warm-trace.txt")
    if cache and os.path.exists(trace):
        os.remove(trace)
    out["warm_dirty"] = dirty_mb()
    t0 = start(cmd, {**env, "SPOOL_KEYTRACE": trace} if cache else env)
    out["warm_first"], out["warm_loaded"], _ = watch(t0, a.quiet, a.timeout)
    out["warm_output"] = control_ms()
    # With the head on screen the rest of the catalog loads and is checked without changing
    # the screen, so the screen cannot tell when spool is loaded: spool's trace can. Keys are
    # typed after the last store's check, as a user's would be measured on a loaded list.
    out["warm_checked"] = wait_checked(trace, a.quiet, a.timeout) if cache else None
    # The checks' phases can come more than --quiet ms apart (a store's stat pass under
    # load), and a key typed between them was timed to the last check's end: its status bar
    # going from "loading" back to the key hints, hundreds of ms after a key spool had long
    # drawn. So keys also wait for the status bar to stop saying "loading".
    if cache:
        wait_not_loading(a.timeout)
    out["keys"] = [key_to_settled(k, a.quiet) for k in keys]
    pid = pane_pid()
    out["rss"] = peak_rss_mb(pid) if pid else None
    out["quit"] = quit_ms(pid, a.quiet) if cache and pid else None
    kill_server()
    if cache:
        # Each run's trace is kept (the next run, or the floor's, would replace it).
        global RUN
        RUN += 1
        if os.path.exists(trace):
            shutil.copy(trace, os.path.join(a.work, "warm-trace-%d.txt" % RUN))
        child_peaks(trace)
        if indexed(trace):
            print("note: warm run %d rebuilt part of the index (warm-trace-%d.txt): its peak "
                  "RSS includes the build" % (RUN, RUN), file=sys.stderr)
    return out


RUN = 0


# Peak RSS (kB) of each index child (`spool __index`) that spool's traces reported: the
# full-text index is written in a child process, so the browser's VmHWM never holds it.
CHILD_PEAKS = []


def child_peaks(trace):
    """Record the `index_child_peak_kb` counts of a SPOOL_KEYTRACE file."""
    try:
        with open(trace) as f:
            CHILD_PEAKS.extend(int(l.split()[2]) for l in f
                               if l.startswith("count index_child_peak_kb "))
    except (OSError, ValueError, IndexError):
        pass


def child_peak_mb():
    """The largest index child's peak since the last call, in MB (None: no child ran)."""
    peak = max(CHILD_PEAKS) / 1024 if CHILD_PEAKS else None
    CHILD_PEAKS.clear()
    return peak


def indexed(trace):
    """Whether spool's trace shows the full-text index being built in that run."""
    try:
        # A start that finds its index current reports one `index_progress` (0 of 0) to
        # clear the status line; only a build commits.
        return any("index_committed" in l for l in open(trace))
    except OSError:
        return False


def prime(cmd, env, a, tries=5):
    """Start spool until a start finds its index current. The cold run's build can end
    between two polls of its progress, or be cut short when the build shows late (10k pi
    sessions, 1.2 GB: the last session's warm run was re-indexing, so its peak RSS was the
    build's, 70 MB, not the browser's, 30 MB)."""
    trace = os.path.join(a.work, "prime-trace.txt")
    for _ in range(tries):
        if os.path.exists(trace):
            os.remove(trace)
        t0 = start(cmd, {**env, "SPOOL_KEYTRACE": trace})
        watch(t0, a.quiet, a.timeout)
        time.sleep(2)
        busy = indexed(trace) or "indexing" in screen()
        if busy:
            watch(time.perf_counter(), a.quiet, a.timeout, busy=("loading", "indexing"))
        kill_server()
        child_peaks(trace)
        if not busy:
            return


def dirty_mb():
    """Dirty and under-writeback page cache in MB (/proc/meminfo): what the kernel still has
    to write when a start begins (an index build's files just before a warm start)."""
    kb = 0
    try:
        for line in open("/proc/meminfo"):
            if line.startswith(("Dirty:", "Writeback:")):
                kb += int(line.split()[1])
    except OSError:
        return None
    return kb / 1024.0


def timed(argv, env):
    t = time.perf_counter()
    subprocess.run(argv, env={**os.environ, **env}, stdout=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - t) * 1000


def floor_cmd(work):
    """The floor: a program that prints a screenful of rows at once and waits (the harness's
    own cost of each figure)."""
    rowsfile = os.path.join(work, "rows.txt")
    with open(rowsfile, "w") as f:
        f.write("\n".join("session %d  some title of a session" % i for i in range(30)))
    return ["sh", "-c", "cat %s; sleep 600" % rowsfile]


def first_text(t0, timeout_s):
    """Poll until the screen holds any text; ms since t0, or None."""
    while time.perf_counter() - t0 < timeout_s:
        if screen().strip():
            return (time.perf_counter() - t0) * 1000
    return None


def paints(a):
    """The first paints alone, many times: a run of the whole table costs a cold start and
    an index build per sample (minutes at 100k), and single samples spread 12-50 ms with
    what ran before them. Here the catalog and index are primed once; then spool warm,
    spool cold (a fresh home each time) and the floor start in turn, each polled to its
    first text and ended there."""
    os.makedirs(a.work, exist_ok=True)
    load = os.getloadavg()
    floor = floor_cmd(a.work)
    print("load average at start: %.2f %.2f %.2f on %d cores; %d starts each, ms\n"
          % (*load, os.cpu_count(), a.paints))
    print("| corpus | picker | median | min | max | each |\n| --- | --- | --- | --- | --- | --- |")
    import shlex
    if a.existing:
        # As bench_existing: the named corpus, spool run with its flags, a home of its own.
        targets = [(spec.split("=", 1)[0], [SPOOL, *shlex.split(spec.split("=", 1)[1])],
                    env_for(a.home or os.path.join(a.work, "home-existing-%d" % i)))
                   for i, spec in enumerate(a.existing)]
    else:
        targets = [(format(n, ","), spool_cmd(corpus(a.work, n)),
                    env_for(os.path.join(a.work, "home-%d" % n)))
                   for n in [int(s) for s in a.sizes.split(",")]]
    cold_home = os.path.join(a.work, "home-cold")
    for label, cmd, env in targets:
        prime(cmd, env, a)
        got = {"spool, warm": [], "spool, cold": [], "floor": []}
        for _ in range(a.paints):
            for name, argv in (("spool, warm", cmd), ("spool, cold", cmd), ("floor", floor)):
                time.sleep(0.5)
                run_env = env
                if name.endswith("cold"):
                    # A home of its own, emptied each time: no catalog, no index.
                    shutil.rmtree(cold_home, ignore_errors=True)
                    run_env = env_for(cold_home)
                got[name].append(first_text(start(argv, run_env), a.timeout))
                kill_server()
        for name, xs in got.items():
            ok = [x for x in xs if x is not None]
            print("| %s | %s | %s | %s | %s | %s |" % (
                label, name, fmt(pct(ok, 50)), fmt(min(ok, default=None)),
                fmt(max(ok, default=None)), ", ".join(fmt(x) for x in xs)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quiet", type=int, default=300, help="ms of stillness that count as settled")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--keys", default="/fixlogin", help="keys typed, one measurement each")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "spool-bench"))
    ap.add_argument("--picker", action="append", default=[],
                    help="NAME=COMMAND of another picker, run with HOME at the corpus home")
    ap.add_argument("--existing", action="append", default=[],
                    help="NAME=SPOOL FLAGS: bench spool on an existing corpus given by its store "
                         "flags (point the other stores at empty dirs) instead of --sizes")
    ap.add_argument("--during-build", action="store_true",
                    help="keystrokes while the first full-text index build runs (see above)")
    ap.add_argument("--each", action="store_true",
                    help="also print each run's first paints, check and peak RSS, in order")
    ap.add_argument("--build-keys", type=int, default=30, help="keys typed per run, --during-build")
    ap.add_argument("--keytrace", action="store_true",
                    help="--during-build: also report spool's own share of each key (the time "
                         "from the key read to its frame written, logged by spool under "
                         "SPOOL_KEYTRACE), to tell spool's delays from the terminal's")
    ap.add_argument("--control", action="store_true",
                    help="also time the first paint as tmux reads it: sessions are made by a "
                         "control-mode client (`tmux -C`), detached after the first text "
                         "(the 'tmux's read' figures; without it they read –)")
    ap.add_argument("--paints", type=int, default=0, metavar="N",
                    help="only the first paints: after one priming start, N warm and N cold "
                         "starts of spool alternated with N of the floor, each ended at its "
                         "first text (see paints)")
    ap.add_argument("--home", help="--paints --existing: a home already primed on that "
                                   "corpus (its catalog and index current), kept")
    a = ap.parse_args()
    CONTROL["on"] = a.control
    if a.paints:
        return paints(a)
    if a.during_build:
        return during_build(a)
    if a.existing:
        return bench_existing(a)
    os.makedirs(a.work, exist_ok=True)
    load = os.getloadavg()
    rows, each = [], []
    for n in [int(s) for s in a.sizes.split(",")]:
        c = corpus(a.work, n)
        home = os.path.join(a.work, "home-%d" % n)
        env = env_for(home)
        cache = home + "/.cache/spool"
        pickers = [("spool", spool_cmd(c), cache)]
        pickers += [(p.split("=", 1)[0], ["sh", "-c", p.split("=", 1)[1]], None) for p in a.picker]
        pickers.append(("floor: print rows at once", floor_cmd(a.work), None))
        for name, cmd, ch in pickers:
            keys_typed = [] if name.startswith("floor") else list(a.keys)
            runs = [run_picker(cmd, env, ch, a, keys_typed) for _ in range(a.runs)]
            get = lambda k: [r[k] for r in runs]
            keys = [k for r in runs for k in r["keys"]]
            if a.each:
                each.append((n, name, runs))
            rows.append((n, name, {
                "first paint, warm": fmt(pct(get("warm_first"), 50)),
                "first paint, cold": fmt(pct(get("cold_first"), 50)),
                "first paint, warm (tmux's read, control mode)": fmt(pct(get("warm_output"), 50)),
                "first paint, cold (tmux's read, control mode)": fmt(pct(get("cold_output"), 50)),
                "everything loaded, warm": fmt(pct(get("warm_loaded"), 50)),
                "loaded and checked, warm (spool's trace)": fmt(pct([x for x in get("warm_checked") if x], 50)),
                "everything loaded, cold": fmt(pct(get("cold_loaded"), 50)),
                "keystroke settled, median": fmt(pct(keys, 50)),
                "keystroke settled, p99": fmt(pct(keys, 99)),
                "peak RSS, warm": fmt(pct(get("rss"), 50), " MB"),
                "peak RSS, index child (largest, builds in the runs)": fmt(child_peak_mb(), " MB"),
                "quit, `q` to exit": fmt(pct(get("quit"), 50)),
            }))
        # `spool list`: warm (catalog current), cold (no catalog), and cat of the same bytes.
        lst = spool_cmd(c, ["list", "--json", "--all"])
        shutil.rmtree(cache, ignore_errors=True)
        cold = [timed(lst, env) for _ in range(1)]
        warm = [timed(lst, env) for _ in range(a.runs)]
        files = subprocess.run(["find", c + "/", "-type", "f"], capture_output=True, text=True).stdout.split()
        cat_all = timed(["sh", "-c", "find %s/ -type f -print0 | xargs -0 cat > /dev/null" % c], env)
        cat_cat = timed(["cat", cache + "/catalog.bin"], env)
        rows.append((n, "spool list --json --all", {
            "warm catalog": fmt(pct(warm, 50)), "no catalog": fmt(pct(cold, 50)),
            "floor: cat catalog.bin": fmt(cat_cat),
            "floor: cat %s session files" % format(len(files), ","): fmt(cat_all)}))
    kill_server()
    print("load average at start: %.2f %.2f %.2f on %d cores; %d runs per figure, medians in ms\n"
          % (*load, os.cpu_count(), a.runs))
    for n, name, figs in rows:
        print("**%s sessions: %s**\n" % (format(n, ","), name))
        print("| what | ms |\n| --- | --- |")
        for k, v in shown(figs).items():
            print("| %s | %s |" % (k, v))
        print()
    for n, name, runs in each:
        print_each("%s sessions, %s" % (format(n, ","), name), runs)


# The figures that spread from run to run, each run's in order (`--each`).
EACH = ("warm_first", "cold_first", "warm_output", "cold_output", "warm_checked", "rss",
        "quit", "warm_dirty")


def print_each(label, runs):
    print("%s, each run:" % label)
    for k in EACH:
        xs = [r.get(k) for r in runs]
        if any(x is not None for x in xs):
            print("  %s: %s" % (k, ", ".join("-" if x is None else "%.1f" % x for x in xs)))


def bench_existing(a):
    """The TUI figures and `list --json --all` for spool on corpora that already exist."""
    import shlex
    load = os.getloadavg()
    print("load average at start: %.2f %.2f %.2f on %d cores; %d runs per figure, medians in ms\n"
          % (*load, os.cpu_count(), a.runs))
    for spec in a.existing:
        name, flags = spec.split("=", 1)
        home = os.path.join(a.work, "home-existing")
        env = env_for(home)
        cache = home + "/.cache/spool"
        cmd = [SPOOL, *shlex.split(flags)]
        runs = [run_picker(cmd, env, cache, a, list(a.keys)) for _ in range(a.runs)]
        if a.each:
            print_each(name, runs)
        get = lambda k: [r[k] for r in runs]
        keys = [k for r in runs for k in r["keys"]]
        lst = cmd + ["list", "--json", "--all"]
        shutil.rmtree(cache, ignore_errors=True)
        cold = timed(lst, env)
        warm = [timed(lst, env) for _ in range(a.runs)]
        print("**%s: spool %s**\n\n| what | ms |\n| --- | --- |" % (name, flags))
        for k, v in shown({
            "first paint, warm": fmt(pct(get("warm_first"), 50)),
            "first paint, cold": fmt(pct(get("cold_first"), 50)),
            "first paint, warm (tmux's read, control mode)": fmt(pct(get("warm_output"), 50)),
            "first paint, cold (tmux's read, control mode)": fmt(pct(get("cold_output"), 50)),
            "everything loaded, warm": fmt(pct(get("warm_loaded"), 50)),
            "loaded and checked, warm (spool's trace)": fmt(pct([x for x in get("warm_checked") if x], 50)),
            "everything loaded, cold": fmt(pct(get("cold_loaded"), 50)),
            "keystroke settled, median": fmt(pct(keys, 50)),
            "keystroke settled, p99": fmt(pct(keys, 99)),
            "peak RSS, warm": fmt(pct(get("rss"), 50), " MB"),
            "peak RSS, index child (largest, builds in the runs)": fmt(child_peak_mb(), " MB"),
            "quit, `q` to exit": fmt(pct(get("quit"), 50)),
            "list --json --all, warm catalog": fmt(pct(warm, 50)),
            "list --json --all, no catalog": fmt(cold),
        }).items():
            print("| %s | %s |" % (k, v))
        print()
        shutil.rmtree(home, ignore_errors=True)
    kill_server()


if __name__ == "__main__":
    if not shutil.which("tmux"):
        sys.exit("tmux is needed")
    main()
