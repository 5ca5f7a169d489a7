#!/usr/bin/env bash
# The index batch of an aged crawl, this checkout against BASE: on a copy of
# the index that scripts/life-bench.sh -keep DIR kept at an age, adds the
# next BATCHES turns (default 24) one batch a turn as the loop does
# (internal/cmd/batchbench), with barrel built from this checkout and from
# BASE (default main), RUNS times each (default 3), alternated; prints each
# run's median / 95th percentile / worst CPU and wall seconds a batch, the
# median and range of the runs' figures, the commits and the load average.
# Usage: scripts/batch-bench.sh DIR/age-1000/index [FROM_TURN]   (FROM_TURN default 1000)
# Environment: BASE, RUNS, BATCHES.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
if [ $# -lt 1 ]; then
  echo "batch-bench: the kept index is missing (scripts/batch-bench.sh --help)" >&2
  exit 2
fi
set -euo pipefail
cd "$(dirname "$0")/.."
INDEX=$(realpath "$1")
FROM=${2:-1000}
BASE=${BASE:-main}
RUNS=${RUNS:-3}
BATCHES=${BATCHES:-24}
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

go build -o "$tmp/this" ./internal/cmd/batchbench
# BASE's barrel with this checkout's harness (it uses barrel's API alone).
mkdir -p "$tmp/base-src"
git archive "$BASE" | tar -x -C "$tmp/base-src"
mkdir -p "$tmp/base-src/internal/cmd/batchbench"
cp internal/cmd/batchbench/main.go "$tmp/base-src/internal/cmd/batchbench/"
(cd "$tmp/base-src" && go build -o "$tmp/base" ./internal/cmd/batchbench)

for run in $(seq "$RUNS"); do
  for which in base this; do
    line=$("$tmp/$which" -index "$INDEX" -from "$FROM" -batches "$BATCHES" -scratch "$tmp/scratch")
    echo "$which run $run: $line" | tee -a "$tmp/runs"
  done
done
# median (lowest-highest) of the runs' figures
spread() { sort -n | awk '{v[NR]=$1} END {printf "%s (%s-%s)", v[int((NR+1)/2)], v[1], v[NR]}'; }
for which in base this; do
  cpu=$(grep "^$which " "$tmp/runs" | sed 's/.*CPU s \([0-9.]*\).*/\1/' | spread)
  cpu95=$(grep "^$which " "$tmp/runs" | sed 's/.*CPU s [0-9.]* \/ \([0-9.]*\).*/\1/' | spread)
  wall=$(grep "^$which " "$tmp/runs" | sed 's/.*wall s \([0-9.]*\).*/\1/' | spread)
  echo "$which: a batch's CPU median $cpu s, 95th percentile $cpu95 s; wall median $wall s"
done
echo "this checkout $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- pkg internal || echo '+changes'), base $(git rev-parse --short "$BASE"); $RUNS runs of $BATCHES batches from turn $FROM; load average $LOAD0 before, $(cut -d' ' -f1-3 /proc/loadavg) after"
