#!/bin/sh
# barrel-bench.sh: barrel against bleve v2 on the same pages in one run
# (indexing throughput, index size, query latency), then the title-query
# quality on the Python documentation crawled over loopback.
#   DOCS=100000 QUERIES=2000 scripts/barrel-bench.sh
# Synthetic pages are generated with a fixed seed (pkg/barrel/internal/synth):
# Zipf-distributed words from a 50,000-word vocabulary, titles, headings,
# bold words, paragraphs, links skewed towards some pages.
# Each benchmark runs RUNS times (default 3, at least 3); the results are
# followed by each metric's median and range (internal/cmd/benchsummary),
# under the commit and the machine's load average.
# Usage: [DOCS=N] [QUERIES=N] [RUNS=N] scripts/barrel-bench.sh
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
DOCS=${DOCS:-100000}
QUERIES=${QUERIES:-2000}
RUNS=${RUNS:-3}
[ "$RUNS" -ge 3 ] || { echo "RUNS must be at least 3" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
echo "commit $(git rev-parse --short HEAD), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
# bleve is required only by the module pkg/barrel/blevebench, not the toolkit's.
(cd pkg/barrel/blevebench && go test -run '^$' -bench '^BenchmarkVsBleve$' -benchtime=1x -count="$RUNS" -timeout 120m \
	-barrel.docs="$DOCS" -barrel.queries="$QUERIES") | tee "$T/bench.txt"
go test ./pkg/barrel/ -run '^$' -bench '^BenchmarkBuild$' -benchtime=20000x -count="$RUNS" | tee -a "$T/bench.txt"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
go run ./internal/cmd/benchsummary < "$T/bench.txt"
scripts/barrel-quality.sh
