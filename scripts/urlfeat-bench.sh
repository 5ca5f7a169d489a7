#!/usr/bin/env bash
# Measures urlfeat: the Go benchmark of per-URL extraction on one core, the
# command's throughput and peak memory on 1,000,000 and 100,000 URLs (memory
# must not grow with input in per-URL mode) beside `jq -cR {url:.}` on the
# same file, and the time of one homework `sample` call (average of 100).
# Each process row is the median of RUNS runs (default 3) with the slowest
# and fastest run as its spread, in URLs per CPU second (user + system), the
# figure that holds on a shared machine; the commit and the load average
# head the output.
# Usage: scripts/urlfeat-bench.sh   (RUNS=5 for more runs)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
go build -o bin/urlfeat ./cmd/urlfeat
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
runs=${RUNS:-3}
[ "$runs" -ge 3 ] || { echo "RUNS must be at least 3" >&2; exit 2; }
echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- pkg cmd 2>/dev/null || echo '+changes'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"

echo "== go test -bench (one core)"
go test ./pkg/urlfeat -run '^$' -bench 'Extract|Count|Sample' -cpu 1 -benchtime 2s | grep -E '^Benchmark'

gen() { # N URLs: the bundled general files repeated
  awk -v n="$1" '{ u[NR] = $0 } END { for (i = 0; i < n; i++) print u[i % NR + 1] }' \
    testdata/sekitei/urls.lenta.general testdata/sekitei/urls.wikipedia.general
}
gen 1000000 > "$tmp/1m.txt"
gen 100000 > "$tmp/100k.txt"

# measure NAME FILE CMD...: RUNS runs of CMD on FILE; a row with the median
# URLs per CPU second, the spread, the median wall seconds and peak RSS.
measure() {
  local name=$1 file=$2; shift 2
  local n; n=$(wc -l < "$file")
  for _ in $(seq "$runs"); do
    /usr/bin/time -f '%U %S %e %M' -o "$tmp/time" "$@" "$file" > /dev/null
    cat "$tmp/time"
  done | awk -v name="$name" -v n="$n" '
    function med(a, k,   i, j, t) { for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
      return k % 2 ? a[(k+1)/2] : (a[k/2] + a[k/2+1]) / 2 }
    { c[NR] = $1 + $2; if (c[NR] < 0.01) c[NR] = 0.01; w[NR] = $3; m[NR] = $4; r[NR] = n / c[NR] }
    END { lo = hi = r[1]; for (i = 2; i <= NR; i++) { if (r[i] < lo) lo = r[i]; if (r[i] > hi) hi = r[i] }
      printf "%-36s %9d %12.0f %21s %8.2f %8.1f\n", name, n, n / med(c, NR), sprintf("(%.0f-%.0f)", lo, hi), med(w, NR), med(m, NR) / 1024 }'
}
printf '%-36s %9s %12s %21s %8s %8s\n' command URLs URLs/cpu-s "(spread of runs)" "wall s" "RSS MB"
for f in 100k 1m; do
  measure "urlfeat (per-URL NDJSON)" "$tmp/$f.txt" bin/urlfeat
  measure "urlfeat count" "$tmp/$f.txt" bin/urlfeat count
  measure "jq -cR {url:.} (peer)" "$tmp/$f.txt" jq -cR '{url:.}'
done
echo "(median of $runs runs; in brackets the slowest and fastest run)"

for site in lenta wikipedia; do
  start=$(date +%s%N)
  for i in $(seq 100); do
    bin/urlfeat sample --good "testdata/sekitei/urls.$site.examined" --general "testdata/sekitei/urls.$site.general" > /dev/null
  done
  end=$(date +%s%N)
  awk -v d=$(( (end - start) / 100 )) -v s="$site" 'BEGIN { printf "urlfeat sample on %s: %.1f ms per call (mean of 100, process start included)\n", s, d / 1e6 }'
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
