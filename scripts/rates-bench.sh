#!/usr/bin/env bash
# Recrawl policies compared on the changing web (internal/changeweb): a
# fixed recrawl interval, crawl value without host limits, crawl value with
# the estimated host rates as limits (value+level: the smoothed estimate;
# value+rates: the limits fetch host-rates writes, the estimate with the
# next probe's headroom; both paced by fetch --host-rates, limited by
# recrawl next --host-rates), for the same number of fetches a turn, each policy on its
# own copy of the web, all at once on one virtual clock. Prints the README's
# table: time-averaged true weighted freshness after the warm-up, 503s
# received, pages per host per virtual hour, most requests a host received
# within one virtual second; -runs times (default 3), as median and range.
# Takes about 5 minutes a run of 24 turns.
# Usage: scripts/rates-bench.sh [-turns 24] [-warmup 8] [-n 60] [-speed 5] [-seed 1] [-runs 3] [-v]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./internal/cmd/ratesbench "$@"
