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
# on barrel's Go API and on bleve in one process.
# Usage: scripts/barrel-batch-bench.sh [DOCROOT]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
ROOT=${1:-/usr/share/doc/python3.11/html}
QUERIES=${QUERIES:-2000}
SNIPPET_QUERIES=${SNIPPET_QUERIES:-$QUERIES}
SEED=${SEED:-1}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM

go build -o "$T/" ./cmd/barrel ./internal/cmd/benchqueries
"$T/barrel" build --index "$T/idx" --html-dir "$ROOT" --base-url http://docs.test/
"$T/benchqueries" --html-dir "$ROOT" --n "$QUERIES" --seed "$SEED" > "$T/queries.txt"
head -n "$SNIPPET_QUERIES" "$T/queries.txt" > "$T/snippet-queries.txt"
echo "barrel search batch, $QUERIES queries, --n 10 --no-snippets:"
"$T/barrel" search --index "$T/idx" --n 10 --no-snippets --timing < "$T/queries.txt" > /dev/null
echo "barrel search batch, the first $SNIPPET_QUERIES queries, --n 10 with snippets:"
"$T/barrel" search --index "$T/idx" --n 10 --timing < "$T/snippet-queries.txt" > /dev/null
# bleve is required only by the module pkg/barrel/blevebench, not the toolkit's.
(cd pkg/barrel/blevebench && go test -run '^$' -bench '^BenchmarkQueriesOnPages$' -benchtime=1x -timeout 60m \
	-barrel.htmldir="$ROOT" -barrel.queryfile="$T/queries.txt" -barrel.snippetqueries="$SNIPPET_QUERIES") |
	grep -v '^\(goos\|goarch\|pkg\|cpu\|PASS\|ok\|Benchmark\)' || true
