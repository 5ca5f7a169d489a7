#!/bin/sh
# barrel-bench.sh: barrel against bleve v2 on the same pages in one run
# (indexing throughput, index size, query latency), then the title-query
# quality on the Python documentation crawled over loopback.
#   DOCS=100000 QUERIES=2000 scripts/barrel-bench.sh
# Synthetic pages are generated with a fixed seed (pkg/barrel/internal/synth):
# Zipf-distributed words from a 50,000-word vocabulary, titles, headings,
# bold words, paragraphs, links skewed towards some pages.
# Usage: scripts/barrel-bench.sh
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
DOCS=${DOCS:-100000}
QUERIES=${QUERIES:-2000}
# bleve is required only by the module pkg/barrel/blevebench, not the toolkit's.
(cd pkg/barrel/blevebench && go test -run '^$' -bench '^BenchmarkVsBleve$' -benchtime=1x -timeout 60m \
	-barrel.docs="$DOCS" -barrel.queries="$QUERIES")
go test ./pkg/barrel/ -run '^$' -bench '^BenchmarkBuild$' -benchtime=20000x
scripts/barrel-quality.sh
