#!/bin/sh
# Median wall time of `spool list --json` over a Codex corpus, warm (one untimed run first).
# Usage: scripts/bench_codex_list.sh OUT_HOME [RUNS]
#   python3 ../shared/bench/gen_codex.py OUT_HOME 10000 --seed 1   # the corpus, once
set -eu
home=$1
runs=${2:-5}
spool=${SPOOL:-target/release/spool}
run() {
    HOME="$home" XDG_CACHE_HOME="$home/.cache" XDG_DATA_HOME="$home/.local/share" \
        "$spool" --codex-dir "$home/.codex" list --json --all --format codex >/dev/null
}
run
i=0
times=""
while [ "$i" -lt "$runs" ]; do
    start=$(date +%s%N)
    run
    end=$(date +%s%N)
    times="$times $(( (end - start) / 1000000 ))"
    i=$((i + 1))
done
rows=$(HOME="$home" "$spool" --codex-dir "$home/.codex" list --json --all --format codex | wc -l)
echo "$rows rows; runs (ms):$times"
echo "$times" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print "median ms:", a[int((NR+1)/2)]}'
