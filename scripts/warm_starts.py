#!/usr/bin/env python3
"""Warm starts of one or more spool binaries on a primed home, alternated start by start.

For each start: spool's own clock for the last store's check and for the quick search's
items (SPOOL_KEYTRACE `checked_<store>_at`, `items_built_at`: a query can match every row
from the later of the two), and the peak RSS (VmHWM), with the resident memory sampled every
~2 ms so the peak's moment and make-up (anonymous / file) are known. Each start runs in a
tmux server of its own and is quit 1.5 s after its check.

    python3 scripts/warm_starts.py --home H --store codex --dir H/.codex \\
        --rounds 6 new=target/release/spool old=/tmp/old-spool

The home must be primed: run spool on it once (with the same HOME and XDG_* variables as
below) and let its catalog and full-text index be written. --series prints the samples.
"""
import argparse
import os
import statistics
import subprocess
import time

FLAG = {"codex": "--codex-dir", "claude": "--claude-dir", "pi": "--pi-dir"}


def status(pid):
    """VmRSS, RssAnon, RssFile, VmHWM in MB and the thread count, from /proc."""
    d = {}
    try:
        for line in open(f"/proc/{pid}/status"):
            k, _, v = line.partition(":")
            if k in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                d[k] = int(v.split()[0]) / 1024
            elif k == "Threads":
                d[k] = int(v.split()[0])
    except OSError:
        pass
    return d


def phases(trace):
    out = {}
    if os.path.exists(trace):
        for line in open(trace):
            p = line.split()
            if len(p) >= 3 and p[0] == "phase":
                out[p[1]] = float(p[2])
    return out


def start(a, name, path, r):
    trace = os.path.join(a.work, f"trace-{a.store}-{name}-{r}")
    if os.path.exists(trace):
        os.remove(trace)
    h = a.home
    cmd = (f"exec env HOME={h} XDG_CACHE_HOME={h}/.cache XDG_DATA_HOME={h}/.data "
           f"XDG_CONFIG_HOME={h}/.config SPOOL_KEYTRACE={trace} {path} {FLAG[a.store]} {a.dir}")
    tmux = ["tmux", "-L", "warm-starts"]
    subprocess.run(tmux + ["kill-server"], stderr=subprocess.DEVNULL)
    t0 = time.time()
    subprocess.run(tmux + ["new-session", "-d", "-s", "w", "-x", "160", "-y", "45", cmd], check=True)
    pid = subprocess.check_output(tmux + ["display", "-p", "-t", "w", "#{pane_pid}"]).decode().strip()
    samples, done = [], None
    key = f"checked_{a.store}_at"
    while time.time() - t0 < a.timeout:
        s = status(pid)
        s["t"] = (time.time() - t0) * 1000
        samples.append(s)
        if done is None and key in phases(trace):
            done = time.time()
        if done and time.time() - done > 1.5:
            break
        time.sleep(0.002)
    ph = phases(trace)
    subprocess.run(tmux + ["kill-server"], stderr=subprocess.DEVNULL)
    peak = max(samples, key=lambda s: s.get("VmRSS", 0))
    hwm = samples[-1].get("VmHWM", 0)
    checked, items = ph.get(key), ph.get("items_built_at")
    print(f"{name:10} r{r} checked {checked} items {items} VmHWM {hwm:.1f} MB | sampled peak "
          f"{peak.get('VmRSS', 0):.1f} (anon {peak.get('RssAnon', 0):.1f}, file "
          f"{peak.get('RssFile', 0):.1f}) at {peak['t']:.0f} ms", flush=True)
    if a.series:
        for s in samples[::10]:
            print(f"    {s['t']:6.0f} ms rss {s.get('VmRSS', 0):6.1f} anon {s.get('RssAnon', 0):6.1f}")
        print("   ", " ".join(f"{k}={v}" for k, v in sorted(ph.items(), key=lambda kv: kv[1])))
    return checked, items, hwm


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--home", required=True, help="the primed home (HOME and XDG_* under it)")
    p.add_argument("--store", required=True, choices=sorted(FLAG))
    p.add_argument("--dir", required=True, help="the store's root, as its --X-dir flag takes it")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--work", default="/tmp/spool-warm-starts", help="where the traces go")
    p.add_argument("--series", action="store_true")
    p.add_argument("bins", nargs="+", help="NAME=PATH of each spool binary")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    bins = [b.split("=", 1) for b in a.bins]
    res = {n: [] for n, _ in bins}
    for r in range(a.rounds):
        for name, path in bins:
            res[name].append(start(a, name, path, r))
            time.sleep(0.5)
    for name, _ in bins:
        c = [x[0] for x in res[name] if x[0] is not None]
        s = [max(x[0], x[1]) for x in res[name] if x[0] is not None and x[1] is not None]
        h = [x[2] for x in res[name]]
        med = lambda v: f"{statistics.median(v):.0f}" if v else "-"
        print(f"{name:10} medians: checked {med(c)} ms, searchable (later of checked and items) "
              f"{med(s)} ms, VmHWM {statistics.median(h):.1f} MB (min {min(h):.1f}, max {max(h):.1f})")


if __name__ == "__main__":
    main()
