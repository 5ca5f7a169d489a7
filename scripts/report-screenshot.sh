#!/usr/bin/env bash
# The picture of the crawl report in the README (docs/img/report.png):
# runs the demo's crawl (scripts/demo.sh, a SHARDS=2 crawl of a generated
# web on loopback) unless given a crawl directory, writes its report as an
# HTML page (recrawl report --html) and has headless chromium photograph
# the page's top: the summary and the first plots.
# Usage: scripts/report-screenshot.sh [CRAWL_DIR] [PNG]
#   (default: a new demo crawl in out/report-demo/crawl; docs/img/report.png;
#    WIDTH=1280 HEIGHT=2000 the window in pixels)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."
crawl=${1:-}
png=${2:-docs/img/report.png}
width=${WIDTH:-1280}
height=${HEIGHT:-2000}
if [[ -z "$crawl" ]]; then
  scripts/demo.sh out/report-demo > out/report-demo.log 2>&1 || {
    tail -n 30 out/report-demo.log >&2
    exit 1
  }
  crawl=out/report-demo/crawl
fi
mkdir -p bin "$(dirname "$png")"
go build -o bin/recrawl ./cmd/recrawl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The problems of a damaged crawl are in the page too: still photograph it.
bin/recrawl report --html "$tmp/report.html" "$crawl" > /dev/null || echo "report-screenshot: recrawl report found problems (they are on the page)" >&2
chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --hide-scrollbars --user-data-dir="$tmp/home" --window-size="$width,$height" \
  --screenshot="$tmp/report.png" "file://$tmp/report.html" 2> "$tmp/chromium.err" || {
  cat "$tmp/chromium.err" >&2
  exit 1
}
mv "$tmp/report.png" "$png"
echo "report-screenshot: $png ($(du -k "$png" | cut -f1) kB) of the report of $crawl"
