#!/usr/bin/env bash
# The test command: installs what the tests need, checks formatting, vet and
# staticcheck (a tool of the module, pinned in go.mod), and runs every test
# (fuzz seed corpora included) of the module.
# Usage: scripts/test.sh [go test flags...]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [[ -n "$unformatted" ]]; then
  echo "gofmt would change:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go mod tidy -diff
go vet ./...
go tool staticcheck ./...
# The bleve comparison is a module of its own (the toolkit's does not require
# bleve): its go.mod must be tidy against the toolkit it replaces in, checked
# before the long test run so a stale go.sum fails in seconds.
(cd pkg/barrel/blevebench && go mod tidy -diff && go vet ./...)

# Tests that measure what a test alone can show (kills, extra requests,
# orphan records, survivors, peak memory, exit statuses) append their
# figures to this file (internal/testreport); they are printed after the
# run, since go test shows only failing tests' logs.
report=$(mktemp)
trap 'rm -f "$report"' EXIT
CRAWLKIT_TEST_REPORT=$report go test -count=1 -timeout 25m "$@" ./...
echo "== figures the tests report"
sort "$report"

# Run the bleve comparison's benchmark once on a small synthetic site,
# its one-query-a-command forms included (BenchmarkQueriesOnPages needs the
# Python docs and a query file: scripts/barrel-batch-bench.sh runs it).
(cd pkg/barrel/blevebench &&
  go test -count=1 -run '^$' -bench '^BenchmarkVsBleve$' -benchtime 1x -barrel.docs 200 -barrel.queries 50 -barrel.opened 5 -barrel.commands 5 ./...)
