#!/usr/bin/env bash
# The crawl loop of this checkout against the loop of an older revision on
# the generated web (internal/sitegen served by nginx on loopback): the same
# budget, the same evolving web, the same clock. Prints a Markdown table of
# pages fetched, recrawls, URLs tried and time per turn.
# Usage: scripts/crawl-bench.sh [-old REV] [-turns 12]   (see internal/cmd/loopbench)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh nginx
exec go run ./internal/cmd/loopbench "$@"
