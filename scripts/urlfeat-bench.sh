#!/usr/bin/env bash
# Measures urlfeat: the Go benchmark of per-URL extraction on one core, the
# command's throughput and peak memory on 1,000,000 and 100,000 URLs (memory
# must not grow with input in per-URL mode), and the time of one homework
# `sample` call (average of 100).
# Usage: scripts/urlfeat-bench.sh
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
go build -o bin/urlfeat ./cmd/urlfeat
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

echo "== go test -bench (one core)"
go test ./pkg/urlfeat -run '^$' -bench 'Extract|Count|Sample' -cpu 1 -benchtime 2s | grep -E '^Benchmark'

gen() { # N URLs: the bundled general files repeated
  awk -v n="$1" '{ u[NR] = $0 } END { for (i = 0; i < n; i++) print u[i % NR + 1] }' \
    testdata/sekitei/urls.lenta.general testdata/sekitei/urls.wikipedia.general
}
gen 1000000 > "$tmp/1m.txt"
gen 100000 > "$tmp/100k.txt"

for f in 100k 1m; do
  /usr/bin/time -f "%e %M" -o "$tmp/time" bin/urlfeat "$tmp/$f.txt" > /dev/null
  read -r secs kb < "$tmp/time"
  n=$(wc -l < "$tmp/$f.txt")
  awk -v n="$n" -v s="$secs" -v kb="$kb" 'BEGIN { printf "urlfeat per-URL NDJSON, %d URLs: %.2f s, %.0f URLs/s, peak RSS %.1f MB\n", n, s, n / s, kb / 1024 }'
  /usr/bin/time -f "%e %M" -o "$tmp/time" bin/urlfeat count "$tmp/$f.txt" > /dev/null
  read -r secs kb < "$tmp/time"
  awk -v n="$n" -v s="$secs" -v kb="$kb" 'BEGIN { printf "urlfeat count,         %d URLs: %.2f s, %.0f URLs/s, peak RSS %.1f MB\n", n, s, n / s, kb / 1024 }'
done

for site in lenta wikipedia; do
  start=$(date +%s%N)
  for i in $(seq 100); do
    bin/urlfeat sample --good "testdata/sekitei/urls.$site.examined" --general "testdata/sekitei/urls.$site.general" > /dev/null
  done
  end=$(date +%s%N)
  awk -v d=$(( (end - start) / 100 )) -v s="$site" 'BEGIN { printf "urlfeat sample on %s: %.1f ms per call (mean of 100, process start included)\n", s, d / 1e6 }'
done
