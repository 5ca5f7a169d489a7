#!/usr/bin/env bash
# The life of a crawl: ages a crawl directory by 10, 100, 1,000 and 8,760
# hourly turns of 700 fetch records (internal/crawlsim, through the tools'
# Go APIs), keeping a copy at each age, then times one more turn of
# scripts/crawl-cycle.sh on a copy of each (the fetch replayed), -reps times.
# Prints per step the median time of the -reps runs, their range, and the
# largest peak memory at each age, the
# growth exponent, and the oldest age against 100 turns; then, per age, the
# index as the loop builds it (batch after batch, one a turn, or -index-turns
# turns a batch, default merge policy): median, 95th percentile and worst
# CPU and wall seconds of its last 24 batches, its segments, its merges and
# their cost, its write amplification, its size against an index of the same
# final pages built in one batch (-one-batch=false skips that build); for a
# year, the build's windows of 240 batches (median, 95th percentile and
# worst CPU of a batch, the PageRank turns apart); and the load average.
# PageRank is timed apart, before each measured turn, so that the turn
# after a year (a PageRank turn) is an ordinary one. A year's ageing takes hours on a
# 2-core machine; -keep DIR keeps the aged copies (tens of GB for a year), a
# killed run started again with the same DIR, -ages and -chunk resumes its
# ageing where it stopped and its index build from its last checkpoint
# (every 240 batches), and a run whose ages are all kept only measures.
# -ages 10,100,1000 is the quick form. -deletes-pct P builds the index
# batch after batch with barrel build --deletes-pct P (a kept DIR holds
# one such build: its key names P). -one-batch-only -keep DIR builds
# only the one-batch indexes and keeps their sizes in DIR, for a run
# beside the year's batch-by-batch build (on a spare core); -windows TSV
# prints the windows of a build's lifebench-index-turns.tsv (an age's
# copy, or DIR/index.checkpoint's while it runs). -search N -keep DIR times
# N queries (internal/benchqueries, sampled from the crawl's pages) on each
# kept age's index as the loop built it and on an index of the same final
# pages built in one batch (built once and kept in DIR), -reps passes of
# each alternated, and in each the first 100 queries on each index opened
# for each query (as one barrel search command): the CPU p50 and p99 per
# query, median and range, and the loop's index against the one batch.
# Usage: scripts/life-bench.sh [-ages 10,100,1000,8760] [-chunk 24] [-index-turns 1] [-deletes-pct P] [-reps 3] [-one-batch=true] [-keep DIR]
#        scripts/life-bench.sh -one-batch-only [-ages ...] -keep DIR
#        scripts/life-bench.sh -search 2000 [-ages ...] [-reps 3] -keep DIR
#        scripts/life-bench.sh -windows DIR/age-8760/lifebench-index-turns.tsv
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./internal/cmd/lifebench "$@"
