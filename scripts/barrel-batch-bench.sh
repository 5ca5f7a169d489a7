#!/bin/sh
# barrel-batch-bench.sh: query latency of `barrel search` in batch mode on
# the Python documentation (Debian's python3.11-doc), beside bleve on the
# same pages and queries.
#   QUERIES=2000 SNIPPET_QUERIES=2000 SEED=1 scripts/barrel-batch-bench.sh [DOCROOT]
# (SNIPPET_QUERIES, the queries also timed with snippets, defaults to all)
# The queries (internal/benchqueries) are a fifth page titles and the rest
# one to three consecutive words of a page's text, sampled with SEED. One
# barrel process answers them all (--timing prints its per-query p50, p99
# and maximum, each query's search, snippets and output); then
# BenchmarkQueriesOnPages (pkg/barrel/blevebench) times the same queries
# on barrel's Go API and on bleve in one process. Each is run RUNS times
# (default 3, at least 3) and followed by the median and range of its
# figures, under the commit and the machine's load average.
# Usage: [QUERIES=N] [SNIPPET_QUERIES=N] [SEED=N] [RUNS=N] scripts/barrel-batch-bench.sh [DOCROOT]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
ROOT=${1:-/usr/share/doc/python3.11/html}
QUERIES=${QUERIES:-2000}
SNIPPET_QUERIES=${SNIPPET_QUERIES:-$QUERIES}
SEED=${SEED:-1}
RUNS=${RUNS:-3}
[ "$RUNS" -ge 3 ] || { echo "RUNS must be at least 3" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM

go build -o "$T/" ./cmd/barrel ./internal/cmd/benchqueries
"$T/barrel" build --index "$T/idx" --html-dir "$ROOT" --base-url http://docs.test/
"$T/benchqueries" --html-dir "$ROOT" --n "$QUERIES" --seed "$SEED" > "$T/queries.txt"
head -n "$SNIPPET_QUERIES" "$T/queries.txt" > "$T/snippet-queries.txt"
# timed FILE [FLAGS] answers the queries of FILE RUNS times, printing each
# run's --timing line, then the median and range of its wall p50, p99 and
# max.
timed() {
	file=$1
	shift
	: > "$T/timing"
	for _ in $(seq "$RUNS"); do
		"$T/barrel" search --index "$T/idx" --n 10 --timing "$@" < "$file" 2>&1 > /dev/null | grep 'per query' | tee -a "$T/timing"
	done
	for f in p50 p99 max; do
		sed -n "s/.*per query\(.*\); CPU time.*/\1/p" "$T/timing" | sed -n "s/.* $f \([0-9.]*\)ms.*/\1/p" | sort -n |
			awk -v f="$f" '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "  wall %s: median %.3f ms (%.3f-%.3f)\n", f, m, v[1], v[NR]}'
	done
}
echo "commit $(git rev-parse --short HEAD), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min), $RUNS runs"
echo "barrel search batch, $QUERIES queries, --n 10 --no-snippets:"
timed "$T/queries.txt" --no-snippets
echo "barrel search batch, the first $SNIPPET_QUERIES queries, --n 10 with snippets:"
timed "$T/snippet-queries.txt"
# bleve is required only by the module pkg/barrel/blevebench, not the toolkit's.
(cd pkg/barrel/blevebench && go test -run '^$' -bench '^BenchmarkQueriesOnPages$' -benchtime=1x -count="$RUNS" -timeout 60m \
	-barrel.htmldir="$ROOT" -barrel.queryfile="$T/queries.txt" -barrel.snippetqueries="$SNIPPET_QUERIES") | tee "$T/bench.txt" |
	grep -v '^\(goos\|goarch\|pkg\|cpu\|PASS\|ok\|Benchmark\)' || true
go run ./internal/cmd/benchsummary < "$T/bench.txt"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
