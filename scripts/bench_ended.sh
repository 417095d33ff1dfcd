#!/bin/sh
# Does deriving `ended` slow the listing? Times `spool list --json --all` over a corpus with
# two binaries, alternating runs so both see the same machine load, and prints the medians.
#   scripts/bench_ended.sh BASE_BINARY NEW_BINARY CORPUS_DIR [RUNS]
# Corpus: cargo run --release --example gen_corpus -- CORPUS_DIR 100000
set -eu
base=$1 new=$2 corpus=$3 runs=${4:-5}
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
run() {
    start=$(date +%s.%N)
    HOME=$home XDG_CACHE_HOME=$home/.cache "$1" --loop-dir "$corpus/loop" --loom-dir "$corpus/loom" \
        --harness-dir "$corpus/harness" list --json --all >/dev/null
    end=$(date +%s.%N)
    echo "$end - $start" | bc
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run "$base" >/dev/null # warm the page cache
: >"$home/base" && : >"$home/new"
i=0
while [ $i -lt "$runs" ]; do
    run "$base" >>"$home/base"
    run "$new" >>"$home/new"
    i=$((i + 1))
done
b=$(median <"$home/base") n=$(median <"$home/new")
echo "base runs: $(tr '\n' ' ' <"$home/base")"
echo "new  runs: $(tr '\n' ' ' <"$home/new")"
echo "median base ${b}s, new ${n}s, change $(echo "scale=1; ($n - $b) * 100 / $b" | bc)%"
