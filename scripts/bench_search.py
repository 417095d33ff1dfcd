#!/usr/bin/env python3
"""Benchmarks of spool's full-text search, one command per target of issue 8. Figures are
medians and p99 over several runs, with the load average printed beside them (compare
ratios on a shared machine). Build first: `cargo build --release --examples`.

  bench_search.py corpus DIR N     generate a corpus of N sessions (gen_corpus) if DIR lacks one
  bench_search.py build DIR        full index build from nothing: seconds, peak RSS, size/text
  bench_search.py query DIR        text query to results on a built index: median and p99 ms
  bench_search.py cli DIR          `spool search` whole process with a warm index: median, p99
  bench_search.py append DIR       a session appended to while the browser runs: seconds until
                                   its new word is found by the text search (`s`), via tmux
"""

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REL = os.path.join(ROOT, "target", "release")
SPOOL = os.path.join(REL, "spool")
STATS = os.path.join(REL, "examples", "index_stats")


def load():
    return "load %.2f" % os.getloadavg()[0]


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round((len(xs) - 1) * q))]


def dirs(corpus):
    return ["--loop-dir", corpus + "/loop", "--loom-dir", corpus + "/loom",
            "--harness-dir", corpus + "/harness"]


def env_home(home):
    env = dict(os.environ, HOME=home, XDG_CACHE_HOME=home + "/.cache")
    env.pop("XDG_DATA_HOME", None)
    return env


def corpus(d, n):
    if not os.path.exists(os.path.join(d, "loop")):
        subprocess.run([os.path.join(REL, "examples", "gen_corpus"), d, n], check=True)
    print("corpus", d)


def build(d, runs=3):
    secs, rss = [], []
    for _ in range(runs):
        out = subprocess.run(["/usr/bin/time", "-f", "RSS_KB %M", STATS, d, "--build"],
                             capture_output=True, text=True, check=True)
        print(out.stdout.strip(), "|", out.stderr.strip(), "|", load())
        secs.append(float(re.search(r"build_s (\S+)", out.stdout).group(1)))
        rss.append(int(re.search(r"RSS_KB (\d+)", out.stderr).group(1)))
    print("build median %.2f s, max %.2f s, peak RSS %d MB (%s)"
          % (statistics.median(secs), max(secs), max(rss) // 1024, load()))


def query(d, runs=200):
    if not os.path.exists(d.rstrip("/") + ".index-stats"):
        subprocess.run([STATS, d, "--build"], check=True)
    out = subprocess.run([STATS, d, "--queries", str(runs)], capture_output=True, text=True,
                         check=True)
    print(out.stdout.strip(), "|", load())


def cli(d, runs=50):
    home = tempfile.mkdtemp(prefix="spool-bench-")
    env = env_home(home)
    cmd = [SPOOL] + dirs(d) + ["search", "--limit", "20", "timeout"]
    try:
        subprocess.run(cmd, env=env, capture_output=True, check=True)  # builds the index
        subprocess.run(cmd, env=env, capture_output=True, check=True)  # records stamps
        ms = []
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run(cmd, env=env, capture_output=True, check=True)
            ms.append((time.perf_counter() - t0) * 1e3)
        print("spool search (warm) median %.1f ms, p99 %.1f ms, n=%d (%s)"
              % (statistics.median(ms), pct(ms, 0.99), runs, load()))
    finally:
        shutil.rmtree(home, ignore_errors=True)


def tmux(*args):
    return subprocess.run(["tmux", "-L", "spool-bench"] + list(args), capture_output=True,
                          text=True).stdout


def append(d, runs=5):
    home = tempfile.mkdtemp(prefix="spool-bench-")
    env = env_home(home)
    loom = os.path.join(d, "loom", "sessions")
    victim = os.path.join(loom, sorted(f for f in os.listdir(loom) if f.endswith(".jsonl"))[0])
    size = os.path.getsize(victim)
    subprocess.run([SPOOL] + dirs(d) + ["search", "x"], env=env, capture_output=True)
    cmd = "env HOME=%s XDG_CACHE_HOME=%s/.cache %s %s" % (home, home, SPOOL, " ".join(dirs(d)))
    tmux("new-session", "-d", "-x", "140", "-y", "40", "-s", "b", cmd)
    secs = []
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            s = tmux("capture-pane", "-p", "-t", "b")
            if "/ search" in s and "loading" not in s and "indexing" not in s:
                break
            time.sleep(0.2)
        tmux("send-keys", "-t", "b", "s")
        for i in range(runs):
            word = "zq%dappendedword%d" % (os.getpid(), i)
            line = ('{"kind":"message","time":"2026-05-01T10:00:00Z","message":'
                    '{"role":"assistant","content":"%s"}}\n' % word)
            tmux("send-keys", "-t", "b", "C-u")
            tmux("send-keys", "-t", "b", "-l", word)
            # The answer to this query (nothing yet) is on screen before the append.
            while "no session says that" not in tmux("capture-pane", "-p", "-t", "b"):
                time.sleep(0.02)
            t0 = time.perf_counter()
            with open(victim, "a") as f:
                f.write(line)
            # The open search is asked again when the index catches up: no retyping.
            while time.perf_counter() - t0 < 10:
                if "1 hit" in tmux("capture-pane", "-p", "-t", "b"):
                    break
                time.sleep(0.02)
            secs.append(time.perf_counter() - t0)
            print("append %d: searchable after %.2f s (%s)" % (i, secs[-1], load()))
        print("append to searchable: median %.2f s, max %.2f s" % (statistics.median(secs),
                                                                  max(secs)))
    finally:
        tmux("kill-server")
        with open(victim, "r+") as f:
            f.truncate(size)
        shutil.rmtree(home, ignore_errors=True)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    what, d = sys.argv[1], sys.argv[2]
    if what == "corpus":
        corpus(d, sys.argv[3])
    else:
        {"build": build, "query": query, "cli": cli, "append": append}[what](d)


if __name__ == "__main__":
    main()
