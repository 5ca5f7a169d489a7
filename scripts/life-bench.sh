#!/usr/bin/env bash
# The life of a crawl: ages a crawl directory by 10, 100, 1,000 and 8,760
# hourly turns of 700 fetch records (internal/crawlsim, through the tools'
# Go APIs) and, at each age, times one more turn of scripts/crawl-cycle.sh
# with the fetch replayed. Prints per step the time and peak memory at each
# age and the growth exponent. A year's ageing takes a while (see the
# README); -ages 10,100,1000 is the quick form.
# Usage: scripts/life-bench.sh [-ages 10,100,1000,8760] [-chunk 24] [-keep DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./internal/cmd/lifebench "$@"
